//! `sf_native._core`: the compiled half of the `sf_native` package.
//!
//! The logic lives (and is tested with `cargo test`) in the plain-Rust modules
//! below; `py` only converts between Python and them.

pub mod cancel;
pub mod diff;
pub mod edit;
pub mod errors;
pub mod fuzzy;
pub mod grep;
pub mod hash;
pub mod redact;
pub mod walk;

mod py;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    py::register(m)
}
