//! The one place where native errors become Python exceptions.

use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyKeyboardInterrupt, PyTypeError, PyValueError,
};
use pyo3::PyErr;
use std::fmt;

create_exception!(
    _core,
    NativeError,
    PyException,
    "An error inside SF's native module."
);

/// Errors of the plain-Rust logic; `From<NativeFailure> for PyErr` maps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NativeFailure {
    /// A path that does not exist (Python `FileNotFoundError`).
    NotFound(String),
    /// A value the function cannot accept (Python `ValueError`).
    InvalidValue(String),
    /// A value of the wrong type (Python `TypeError`).
    WrongType(String),
    /// Ctrl-C arrived while native work was running (Python `KeyboardInterrupt`).
    Interrupted,
    /// Anything else (Python `sf_native.NativeError`).
    Other(String),
}

impl fmt::Display for NativeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound(msg)
            | Self::InvalidValue(msg)
            | Self::WrongType(msg)
            | Self::Other(msg) => f.write_str(msg),
            Self::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for NativeFailure {}

impl From<NativeFailure> for PyErr {
    fn from(failure: NativeFailure) -> Self {
        match failure {
            NativeFailure::NotFound(msg) => PyFileNotFoundError::new_err(msg),
            NativeFailure::InvalidValue(msg) => PyValueError::new_err(msg),
            NativeFailure::WrongType(msg) => PyTypeError::new_err(msg),
            NativeFailure::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
            NativeFailure::Other(msg) => NativeError::new_err(msg),
        }
    }
}

pub type NativeResult<T> = Result<T, NativeFailure>;
