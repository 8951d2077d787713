//! Cooperative cancellation for long native calls.
//!
//! Worker threads cannot see Python signals, so the thread that holds the Python
//! call polls `check_signals` (see `py::run_interruptible`) and raises this flag;
//! the workers check it between files and stop with [`NativeFailure::Interrupted`].

use crate::errors::{NativeFailure, NativeResult};
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Default)]
pub struct Cancel(AtomicBool);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Interrupted)` once cancelled, for `?` in loops.
    pub fn check(&self) -> NativeResult<()> {
        if self.is_cancelled() {
            Err(NativeFailure::Interrupted)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_flag_is_clear_and_cancel_sets_it() {
        let cancel = Cancel::new();
        assert!(cancel.check().is_ok());
        cancel.cancel();
        assert_eq!(cancel.check(), Err(NativeFailure::Interrupted));
    }
}
