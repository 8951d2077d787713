//! `unified_diff`, `diff_stats`, `apply_edit` and `redact`: text in, text out.
//! Each releases the GIL while it works on large input.

use crate::diff::{self, DiffOptions, Side};
use crate::edit;
use pyo3::prelude::*;

/// Inputs smaller than this are handled without releasing the GIL, which would
/// cost more than the work.
const DETACH_THRESHOLD: usize = 32 * 1024;

fn maybe_detach<T: Send>(py: Python<'_>, size: usize, work: impl FnOnce() -> T + Send) -> T {
    if size > DETACH_THRESHOLD {
        py.detach(work)
    } else {
        work()
    }
}

fn diff_options(context: usize, algorithm: &str) -> PyResult<DiffOptions> {
    Ok(DiffOptions {
        context,
        algorithm: diff::parse_algorithm(algorithm)?,
    })
}

/// The diff from `old` to `new` in `diff -u` format ("" when they are equal).
///
/// Headers are `--- from_file` / `+++ to_file` (each followed by a tab and the
/// date when one is given), hunks `@@ -start,len +start,len @@` with `context`
/// unchanged lines around each change, and a last line without a newline is
/// followed by `\ No newline at end of file`. `patch` applies the result.
/// `algorithm` is `"myers"` (smallest diff) or `"patience"`.
#[pyfunction]
#[pyo3(signature = (
    old, new, *, from_file = "a", to_file = "b", from_date = None, to_date = None,
    context = 3, algorithm = "myers",
))]
#[allow(clippy::too_many_arguments)]
fn unified_diff(
    py: Python<'_>,
    old: &str,
    new: &str,
    from_file: &str,
    to_file: &str,
    from_date: Option<&str>,
    to_date: Option<&str>,
    context: usize,
    algorithm: &str,
) -> PyResult<String> {
    let options = diff_options(context, algorithm)?;
    let old_side = Side {
        name: from_file,
        date: from_date,
        text: old,
    };
    let new_side = Side {
        name: to_file,
        date: to_date,
        text: new,
    };
    Ok(maybe_detach(py, old.len() + new.len(), || {
        diff::unified_diff(&old_side, &new_side, &options)
    }))
}

/// `(insertions, deletions, hunks)` of the diff `unified_diff` would print.
#[pyfunction]
#[pyo3(signature = (old, new, *, context = 3, algorithm = "myers"))]
fn diff_stats(
    py: Python<'_>,
    old: &str,
    new: &str,
    context: usize,
    algorithm: &str,
) -> PyResult<(usize, usize, usize)> {
    let options = diff_options(context, algorithm)?;
    let stats = maybe_detach(py, old.len() + new.len(), || {
        diff::diff_stats(old, new, &options)
    });
    Ok((stats.insertions, stats.deletions, stats.hunks))
}

/// `(text, how, start_line, end_line, similarity)`; see `sf_native.apply_edit`.
#[pyfunction]
#[pyo3(signature = (text, search, replace, *, threshold))]
fn apply_edit(
    py: Python<'_>,
    text: &str,
    search: &str,
    replace: &str,
    threshold: f64,
) -> PyResult<(String, &'static str, usize, usize, f64)> {
    let outcome = maybe_detach(py, text.len(), || {
        edit::apply_edit(text, search, replace, threshold)
    })?;
    Ok((
        outcome.text,
        outcome.kind.name(),
        outcome.start_line,
        outcome.end_line,
        outcome.similarity,
    ))
}

/// `(kind, start, end, rule id)`.
type Finding = (String, usize, usize, String);

/// One pass of redaction: `(redacted text, [(kind, start, end, rule id)])`; see
/// `sf_native.redact`, which repeats it until nothing new turns up.
#[pyfunction]
#[pyo3(signature = (text, extra_rules = None, *, gitleaks = true))]
fn redact(
    py: Python<'_>,
    text: &str,
    extra_rules: Option<Vec<(String, String)>>,
    gitleaks: bool,
) -> PyResult<(String, Vec<Finding>)> {
    let rules = crate::redact::rules_for(&extra_rules.unwrap_or_default(), gitleaks)?;
    let outcome = maybe_detach(py, text.len(), || crate::redact::redact(text, &rules));
    let findings = outcome
        .findings
        .into_iter()
        .map(|finding| (finding.kind, finding.start, finding.end, finding.rule))
        .collect();
    Ok((outcome.text, findings))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(unified_diff, m)?)?;
    m.add_function(wrap_pyfunction!(diff_stats, m)?)?;
    m.add_function(wrap_pyfunction!(apply_edit, m)?)?;
    m.add_function(wrap_pyfunction!(redact, m)?)?;
    m.add("DEFAULT_EDIT_THRESHOLD", edit::DEFAULT_THRESHOLD)?;
    m.add(
        "SECRET_KINDS",
        pyo3::types::PyTuple::new(m.py(), crate::redact::secret_kinds())?,
    )?;
    let dropped: Vec<(&str, &str)> = crate::redact::gitleaks::GITLEAKS_DROPPED.to_vec();
    m.add("GITLEAKS_DROPPED", dropped)?;
    m.add("GITLEAKS_NOTICE", crate::redact::gitleaks::GITLEAKS_NOTICE)?;
    Ok(())
}
