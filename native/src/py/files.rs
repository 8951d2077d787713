//! `walk`, `glob`, `grep` and `find_files`: long calls, run detached and interruptible.

use super::run_interruptible;
use crate::errors::NativeFailure;
use crate::grep::{CaseMode, FileMatches, GrepOptions};
use crate::walk::WalkOptions;
use crate::{fuzzy, py::hashing::py_str};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::path::PathBuf;

/// One matching line of `grep`, with its context lines.
#[pyclass(frozen, module = "sf_native", name = "GrepMatch")]
pub struct GrepMatch {
    path: Py<PyString>,
    #[pyo3(get)]
    line_number: u64,
    #[pyo3(get)]
    column: usize,
    #[pyo3(get)]
    text: String,
    before: Py<PyTuple>,
    after: Py<PyTuple>,
}

#[pymethods]
impl GrepMatch {
    #[getter]
    fn path(&self, py: Python<'_>) -> Py<PyString> {
        self.path.clone_ref(py)
    }

    #[getter]
    fn before(&self, py: Python<'_>) -> Py<PyTuple> {
        self.before.clone_ref(py)
    }

    #[getter]
    fn after(&self, py: Python<'_>) -> Py<PyTuple> {
        self.after.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let path = self.path.bind(py).repr()?;
        let text = PyString::new(py, &self.text).repr()?;
        Ok(format!(
            "GrepMatch(path={path}, line_number={}, column={}, text={text})",
            self.line_number, self.column
        ))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<GrepMatch>() else {
            return Ok(false);
        };
        let other = other.get();
        Ok(self.line_number == other.line_number
            && self.column == other.column
            && self.text == other.text
            && self.path.bind(py).as_any().eq(other.path.bind(py))?
            && self.before.bind(py).as_any().eq(other.before.bind(py))?
            && self.after.bind(py).as_any().eq(other.after.bind(py))?)
    }

    /// Unhashable, like other mutable-looking records with `__eq__`.
    #[classattr]
    fn __hash__() -> Option<()> {
        None
    }
}

#[allow(clippy::too_many_arguments)]
fn walk_options(
    include: Vec<String>,
    exclude: Vec<String>,
    hidden: bool,
    ignore_files: bool,
    max_depth: Option<usize>,
    follow_links: bool,
    threads: usize,
) -> WalkOptions {
    WalkOptions {
        include,
        exclude,
        hidden,
        respect_ignore: ignore_files,
        max_depth,
        follow_links,
        threads,
    }
}

fn to_python_paths(paths: Vec<PathBuf>) -> Vec<std::ffi::OsString> {
    // OsString becomes `str` (undecodable bytes as surrogate escapes, like os.fsdecode).
    paths.into_iter().map(PathBuf::into_os_string).collect()
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn walk(
    py: Python<'_>,
    root: PathBuf,
    include: Vec<String>,
    exclude: Vec<String>,
    hidden: bool,
    ignore_files: bool,
    max_depth: Option<usize>,
    follow_links: bool,
    threads: usize,
) -> PyResult<Vec<std::ffi::OsString>> {
    let options = walk_options(
        include,
        exclude,
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    );
    let paths = run_interruptible(py, |cancel| crate::walk::walk(&root, &options, cancel))?;
    Ok(to_python_paths(paths))
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn glob(
    py: Python<'_>,
    root: PathBuf,
    pattern: String,
    exclude: Vec<String>,
    hidden: bool,
    ignore_files: bool,
    max_depth: Option<usize>,
    follow_links: bool,
    threads: usize,
) -> PyResult<Vec<std::ffi::OsString>> {
    let options = walk_options(
        Vec::new(),
        exclude,
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    );
    let paths = run_interruptible(py, |cancel| {
        crate::walk::glob(&root, &pattern, &options, cancel)
    })?;
    Ok(to_python_paths(paths))
}

fn case_mode(name: &str) -> Result<CaseMode, NativeFailure> {
    match name {
        "sensitive" => Ok(CaseMode::Sensitive),
        "insensitive" => Ok(CaseMode::Insensitive),
        "smart" => Ok(CaseMode::Smart),
        other => Err(NativeFailure::InvalidValue(format!(
            "case must be 'sensitive', 'insensitive' or 'smart', not {other:?}"
        ))),
    }
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn grep(
    py: Python<'_>,
    root: PathBuf,
    pattern: String,
    fixed: bool,
    case: &str,
    word: bool,
    before: usize,
    after: usize,
    max_per_file: Option<u64>,
    max_total: Option<usize>,
    include: Vec<String>,
    exclude: Vec<String>,
    hidden: bool,
    ignore_files: bool,
    max_depth: Option<usize>,
    follow_links: bool,
    threads: usize,
) -> PyResult<Vec<Py<GrepMatch>>> {
    let options = GrepOptions {
        fixed,
        case: case_mode(case)?,
        word,
        before,
        after,
        max_per_file,
        max_total,
        walk: walk_options(
            include,
            exclude,
            hidden,
            ignore_files,
            max_depth,
            follow_links,
            threads,
        ),
    };
    let found = run_interruptible(py, |cancel| {
        crate::grep::grep(&root, &pattern, &options, cancel)
    })?;
    to_python_matches(py, found)
}

fn to_python_matches(py: Python<'_>, found: Vec<FileMatches>) -> PyResult<Vec<Py<GrepMatch>>> {
    let mut out = Vec::with_capacity(found.iter().map(|file| file.lines.len()).sum());
    for file in found {
        // One str per file, shared by its matches.
        let path = file
            .path
            .into_os_string()
            .into_pyobject(py)?
            .cast_into::<PyString>()?
            .unbind();
        for line in file.lines {
            let record = GrepMatch {
                path: path.clone_ref(py),
                line_number: line.line_number,
                column: line.column,
                text: line.text,
                before: PyTuple::new(py, line.before)?.unbind(),
                after: PyTuple::new(py, line.after)?.unbind(),
            };
            out.push(Py::new(py, record)?);
        }
    }
    Ok(out)
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn find_files(
    py: Python<'_>,
    root: PathBuf,
    query: &Bound<'_, PyString>,
    limit: usize,
    include: Vec<String>,
    exclude: Vec<String>,
    hidden: bool,
    ignore_files: bool,
    max_depth: Option<usize>,
    follow_links: bool,
    threads: usize,
) -> PyResult<Vec<(String, u32, Vec<u32>)>> {
    let query = py_str(query)?.to_owned();
    let options = walk_options(
        include,
        exclude,
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    );
    let ranked = run_interruptible(py, |cancel| {
        fuzzy::find_files(&root, &query, &options, limit, cancel)
    })?;
    Ok(ranked
        .into_iter()
        .map(|scored| (scored.path, scored.score, scored.positions))
        .collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GrepMatch>()?;
    m.add_function(wrap_pyfunction!(walk, m)?)?;
    m.add_function(wrap_pyfunction!(glob, m)?)?;
    m.add_function(wrap_pyfunction!(grep, m)?)?;
    m.add_function(wrap_pyfunction!(find_files, m)?)?;
    Ok(())
}
