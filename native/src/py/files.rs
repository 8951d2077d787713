//! `walk`, `glob`, `grep` and `find_files`: long calls, run detached and interruptible.

use super::run_interruptible;
use crate::errors::NativeFailure;
use crate::grep::{CaseMode, FileMatches, GrepOptions};
use crate::walk::WalkOptions;
use crate::{fuzzy, py::hashing::py_str};
use pyo3::exceptions::PyTypeError;
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

/// `include` / `exclude`: one glob or a sequence of them (a single glob is a common
/// slip for a list of one, so both are accepted).
fn globs(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    if let Ok(one) = value.cast::<PyString>() {
        return Ok(vec![py_str(one)?.to_owned()]);
    }
    value.extract::<Vec<String>>().map_err(|err| {
        let kind = value
            .get_type()
            .name()
            .map_or_else(|_| "?".to_owned(), |name| name.to_string());
        PyTypeError::new_err(format!(
            "{name} must be a glob or a sequence of globs (str), not {kind}: {err}"
        ))
    })
}

/// The walking arguments every function here shares, as Python passed them.
struct Walking<'a, 'py> {
    include: Option<&'a Bound<'py, PyAny>>,
    exclude: Option<&'a Bound<'py, PyAny>>,
    hidden: bool,
    ignore_files: bool,
    max_depth: Option<usize>,
    follow_links: bool,
    threads: usize,
}

impl Walking<'_, '_> {
    fn options(&self) -> PyResult<WalkOptions> {
        Ok(WalkOptions {
            include: globs("include", self.include)?,
            exclude: globs("exclude", self.exclude)?,
            hidden: self.hidden,
            respect_ignore: self.ignore_files,
            max_depth: self.max_depth,
            follow_links: self.follow_links,
            threads: self.threads,
        })
    }
}

fn to_python_paths(paths: Vec<PathBuf>) -> Vec<std::ffi::OsString> {
    // OsString becomes `str` (undecodable bytes as surrogate escapes, like os.fsdecode).
    paths.into_iter().map(PathBuf::into_os_string).collect()
}

/// The files under `root`, relative and sorted (see the package docstring).
///
/// `max_depth=1` lists only `root`'s own files. Raises `FileNotFoundError` for a
/// missing root, `NotADirectoryError` for a file, `ValueError` for a bad glob.
#[pyfunction]
#[pyo3(signature = (
    root, *, include = None, exclude = None, hidden = false, ignore_files = true,
    max_depth = None, follow_links = false, threads = 0,
))]
#[allow(clippy::too_many_arguments)]
fn walk(
    py: Python<'_>,
    root: PathBuf,
    include: Option<&Bound<'_, PyAny>>,
    exclude: Option<&Bound<'_, PyAny>>,
    hidden: bool,
    ignore_files: bool,
    max_depth: Option<usize>,
    follow_links: bool,
    threads: usize,
) -> PyResult<Vec<std::ffi::OsString>> {
    let options = Walking {
        include,
        exclude,
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    }
    .options()?;
    let paths = run_interruptible(py, |cancel| crate::walk::walk(&root, &options, cancel))?;
    Ok(to_python_paths(paths))
}

/// The files whose whole relative path matches `pattern`, sorted.
///
/// Like `pathlib.Path.glob`: `*` stays within one directory (`*.py` is the root's
/// own Python files), `**` spans directories (`**/*.py` is all of them). Ignore
/// rules, hidden files and errors as for `walk`.
#[pyfunction]
#[pyo3(signature = (
    root, pattern, *, exclude = None, hidden = false, ignore_files = true,
    max_depth = None, follow_links = false, threads = 0,
))]
#[allow(clippy::too_many_arguments)]
fn glob(
    py: Python<'_>,
    root: PathBuf,
    pattern: String,
    exclude: Option<&Bound<'_, PyAny>>,
    hidden: bool,
    ignore_files: bool,
    max_depth: Option<usize>,
    follow_links: bool,
    threads: usize,
) -> PyResult<Vec<std::ffi::OsString>> {
    let options = Walking {
        include: None,
        exclude,
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    }
    .options()?;
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

/// Lines matching `pattern` in the files of a `walk` of `root`.
///
/// `pattern` is a Rust `regex` (close to Python's `re` without look-around or
/// back-references), or a literal string with `fixed=True`. A match never spans
/// lines. `case="smart"` is insensitive unless the pattern has an upper-case
/// letter; `word=True` keeps only whole-word matches.
///
/// One `GrepMatch` per matching line, in path order then line order, with up to
/// `before` / `after` lines of context (both default to `context`).
/// `max_per_file` caps matching lines per file; `max_total` keeps the first
/// `max_total` matching lines in that order (and stops searching once they are
/// known). Binary files (a NUL byte anywhere) are skipped; invalid UTF-8 shows as
/// U+FFFD. A bad pattern raises `ValueError`.
#[pyfunction]
#[pyo3(signature = (
    root, pattern, *, fixed = false, case = "sensitive", word = false, context = 0,
    before = None, after = None, max_per_file = None, max_total = None,
    include = None, exclude = None, hidden = false, ignore_files = true,
    max_depth = None, follow_links = false, threads = 0,
))]
#[allow(clippy::too_many_arguments)]
fn grep(
    py: Python<'_>,
    root: PathBuf,
    pattern: String,
    fixed: bool,
    case: &str,
    word: bool,
    context: usize,
    before: Option<usize>,
    after: Option<usize>,
    max_per_file: Option<u64>,
    max_total: Option<usize>,
    include: Option<&Bound<'_, PyAny>>,
    exclude: Option<&Bound<'_, PyAny>>,
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
        before: before.unwrap_or(context),
        after: after.unwrap_or(context),
        max_per_file,
        max_total,
        walk: Walking {
            include,
            exclude,
            hidden,
            ignore_files,
            max_depth,
            follow_links,
            threads,
        }
        .options()?,
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

/// A `find_files` result: the path, its score and the matched positions.
#[pyclass(frozen, eq, module = "sf_native", name = "FileMatch")]
#[derive(PartialEq)]
pub struct FileMatch {
    #[pyo3(get)]
    path: String,
    #[pyo3(get)]
    score: u32,
    /// Character offsets in `path` that the query matched (for highlighting).
    positions: Vec<u32>,
}

#[pymethods]
impl FileMatch {
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.positions)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let path = PyString::new(py, &self.path).repr()?;
        let positions = self.positions(py)?.repr()?;
        Ok(format!(
            "FileMatch(path={path}, score={}, positions={positions})",
            self.score
        ))
    }
}

/// The `limit` files of a `walk` whose paths best match `query`, best first.
///
/// Fuzzy, fzf-style: `"wkrs py"` finds `tasks_app/workers.py`. Space-separated
/// terms must all match; `'exact`, `^prefix`, `suffix$` and `!not` terms work as
/// in fzf; lower-case terms ignore case. Ties go to the shorter path, then to path
/// order.
#[pyfunction]
#[pyo3(signature = (
    root, query, *, limit = 20, include = None, exclude = None, hidden = false,
    ignore_files = true, max_depth = None, follow_links = false, threads = 0,
))]
#[allow(clippy::too_many_arguments)]
fn find_files(
    py: Python<'_>,
    root: PathBuf,
    query: &Bound<'_, PyString>,
    limit: usize,
    include: Option<&Bound<'_, PyAny>>,
    exclude: Option<&Bound<'_, PyAny>>,
    hidden: bool,
    ignore_files: bool,
    max_depth: Option<usize>,
    follow_links: bool,
    threads: usize,
) -> PyResult<Vec<FileMatch>> {
    let query = py_str(query)?.to_owned();
    let options = Walking {
        include,
        exclude,
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    }
    .options()?;
    let ranked = run_interruptible(py, |cancel| {
        fuzzy::find_files(&root, &query, &options, limit, cancel)
    })?;
    Ok(ranked
        .into_iter()
        .map(|scored| FileMatch {
            path: scored.path,
            score: scored.score,
            positions: scored.positions,
        })
        .collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GrepMatch>()?;
    m.add_class::<FileMatch>()?;
    m.add_function(wrap_pyfunction!(walk, m)?)?;
    m.add_function(wrap_pyfunction!(glob, m)?)?;
    m.add_function(wrap_pyfunction!(grep, m)?)?;
    m.add_function(wrap_pyfunction!(find_files, m)?)?;
    Ok(())
}
