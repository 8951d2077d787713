//! The Python side of `sf_native._core`: argument conversion and GIL handling only.

pub mod files;
pub mod hashing;
pub mod text;

use crate::cancel::Cancel;
use crate::errors::NativeResult;
use pyo3::prelude::*;
use std::sync::mpsc;
use std::time::Duration;

/// How often a detached call looks for Ctrl-C (Python's own check runs every 5 ms
/// of bytecode; 50 ms is unnoticeable to a person and costs nothing).
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `work` on a helper thread with the GIL released, while this thread (the
/// one that entered from Python, so the one that receives signals) polls
/// `check_signals`. A signal handler that raises cancels the work, and its
/// exception (normally `KeyboardInterrupt`) is what the caller sees.
pub fn run_interruptible<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&Cancel) -> NativeResult<T> + Send,
{
    let cancel = Cancel::new();
    let mut raised: Option<PyErr> = None;
    let cancel = &cancel;
    let outcome = py.detach(|| {
        std::thread::scope(|scope| {
            let (done, finished) = mpsc::channel::<()>();
            let worker = scope.spawn(move || {
                let result = work(cancel);
                let _ = done.send(());
                result
            });
            while let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(SIGNAL_POLL) {
                if raised.is_none() {
                    if let Err(err) = Python::attach(|py| py.check_signals()) {
                        raised = Some(err);
                        cancel.cancel();
                    }
                }
            }
            worker.join()
        })
    });
    if let Some(err) = raised {
        return Err(err);
    }
    match outcome {
        Ok(result) => result.map_err(PyErr::from),
        Err(_) => {
            Err(crate::errors::NativeFailure::Other("native worker thread panicked".into()).into())
        }
    }
}

/// Registers every function and class of `_core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    hashing::register(m)?;
    files::register(m)?;
    text::register(m)?;
    Ok(())
}
