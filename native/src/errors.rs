//! The one place where native errors become Python exceptions.
//!
//! The plain-Rust modules return [`NativeFailure`]; `From<NativeFailure> for PyErr`
//! below is the only mapping to Python. `EditNoMatch` and `EditAmbiguous` subclass
//! both `ValueError` and `NativeError`, which `create_exception!` (one base only)
//! cannot express, so they are built once with `type(name, bases, namespace)`.

use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyKeyboardInterrupt, PyNotADirectoryError, PyTypeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use std::fmt;

create_exception!(
    sf_native,
    NativeError,
    PyException,
    "An error inside SF's native module that is not a type, value or path error."
);

/// Errors of the plain-Rust logic; `From<NativeFailure> for PyErr` maps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NativeFailure {
    /// A path that does not exist (Python `FileNotFoundError`).
    NotFound(String),
    /// A path that should be a directory and is not (Python `NotADirectoryError`).
    NotADirectory(String),
    /// A value the function cannot accept, such as a bad regex (Python `ValueError`).
    InvalidValue(String),
    /// A value of the wrong type (Python `TypeError`).
    WrongType(String),
    /// `apply_edit` found nothing similar enough (Python `sf_native.EditNoMatch`).
    EditNoMatch(String),
    /// `apply_edit` found more than one place (Python `sf_native.EditAmbiguous`).
    EditAmbiguous(String),
    /// Ctrl-C arrived while native work was running (Python `KeyboardInterrupt`).
    Interrupted,
    /// Anything else (Python `sf_native.NativeError`).
    Other(String),
}

impl fmt::Display for NativeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound(msg)
            | Self::NotADirectory(msg)
            | Self::InvalidValue(msg)
            | Self::WrongType(msg)
            | Self::EditNoMatch(msg)
            | Self::EditAmbiguous(msg)
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
            NativeFailure::NotADirectory(msg) => PyNotADirectoryError::new_err(msg),
            NativeFailure::InvalidValue(msg) => PyValueError::new_err(msg),
            NativeFailure::WrongType(msg) => PyTypeError::new_err(msg),
            NativeFailure::EditNoMatch(msg) => edit_error(&EDIT_NO_MATCH, msg),
            NativeFailure::EditAmbiguous(msg) => edit_error(&EDIT_AMBIGUOUS, msg),
            NativeFailure::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
            NativeFailure::Other(msg) => NativeError::new_err(msg),
        }
    }
}

pub type NativeResult<T> = Result<T, NativeFailure>;

/// An exception class that subclasses `ValueError` and `NativeError`.
struct EditErrorType {
    name: &'static str,
    doc: &'static str,
    cell: PyOnceLock<Py<PyType>>,
}

static EDIT_NO_MATCH: EditErrorType = EditErrorType {
    name: "EditNoMatch",
    doc: "apply_edit found no place similar enough to the search text.",
    cell: PyOnceLock::new(),
};

static EDIT_AMBIGUOUS: EditErrorType = EditErrorType {
    name: "EditAmbiguous",
    doc: "apply_edit found the search text in more than one place.",
    cell: PyOnceLock::new(),
};

impl EditErrorType {
    fn get<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyType>> {
        let ty = self.cell.get_or_try_init(py, || {
            let bases = PyTuple::new(
                py,
                [py.get_type::<PyValueError>(), py.get_type::<NativeError>()],
            )?;
            let namespace = PyDict::new(py);
            namespace.set_item("__doc__", self.doc)?;
            namespace.set_item("__module__", "sf_native")?;
            let made = py
                .get_type::<PyType>()
                .call1((self.name, bases, namespace))?;
            Ok::<_, PyErr>(made.cast_into::<PyType>()?.unbind())
        })?;
        Ok(ty.bind(py))
    }
}

fn edit_error(kind: &EditErrorType, msg: String) -> PyErr {
    Python::attach(|py| match kind.get(py) {
        Ok(ty) => PyErr::from_type(ty.clone(), msg),
        Err(err) => err,
    })
}

/// Adds the exception classes to the module (called from `#[pymodule]`).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("NativeError", py.get_type::<NativeError>())?;
    m.add("EditNoMatch", EDIT_NO_MATCH.get(py)?)?;
    m.add("EditAmbiguous", EDIT_AMBIGUOUS.get(py)?)?;
    Ok(())
}

/// Maps an I/O error on `path` to the failure Python expects for it.
pub fn io_failure(path: &std::path::Path, err: &std::io::Error) -> NativeFailure {
    let shown = path.display();
    match err.kind() {
        std::io::ErrorKind::NotFound => {
            NativeFailure::NotFound(format!("{shown}: no such file or directory"))
        }
        std::io::ErrorKind::NotADirectory => {
            NativeFailure::NotADirectory(format!("{shown}: not a directory"))
        }
        _ => NativeFailure::Other(format!("{shown}: {err}")),
    }
}
