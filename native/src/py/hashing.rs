//! `canonical_json` / `canonical_hash` over Python objects, writing through the
//! same functions as `hash::Value` so both follow one set of rules.

use crate::errors::{NativeFailure, NativeResult};
use crate::hash;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Hashing a buffer larger than this releases the GIL while SHA-256 runs.
const DETACH_THRESHOLD: usize = 64 * 1024;

/// Canonical JSON (RFC 8785 style) of a JSON-like Python value.
#[pyfunction]
fn canonical_json(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut out = String::new();
    write_py(&mut out, obj, 0)?;
    Ok(out)
}

/// Lower-case hex SHA-256 of `canonical_json(obj)`.
#[pyfunction]
fn canonical_hash(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut out = String::with_capacity(256);
    write_py(&mut out, obj, 0)?;
    if out.len() > DETACH_THRESHOLD {
        Ok(py.detach(|| hash::sha256_hex(out.as_bytes())))
    } else {
        Ok(hash::sha256_hex(out.as_bytes()))
    }
}

fn write_py(out: &mut String, obj: &Bound<'_, PyAny>, depth: usize) -> NativeResult<()> {
    // Most common types first: this chain runs once per value.
    if let Ok(text) = obj.cast::<PyString>() {
        hash::write_str(out, py_str(text)?);
    } else if let Ok(dict) = obj.cast::<PyDict>() {
        write_py_dict(out, dict, depth)?;
    } else if obj.is_none() {
        out.push_str("null");
    } else if let Ok(flag) = obj.cast::<PyBool>() {
        out.push_str(if flag.is_true() { "true" } else { "false" });
    } else if let Ok(int) = obj.cast::<PyInt>() {
        write_py_int(out, int)?;
    } else if let Ok(float) = obj.cast::<PyFloat>() {
        hash::write_float(out, float.value())?;
    } else if let Ok(list) = obj.cast::<PyList>() {
        write_py_items(out, list.iter(), depth)?;
    } else if let Ok(tuple) = obj.cast::<PyTuple>() {
        write_py_items(out, tuple.iter(), depth)?;
    } else {
        return Err(NativeFailure::WrongType(format!(
            "object of type {} is not JSON-serializable",
            type_name(obj)
        )));
    }
    Ok(())
}

fn write_py_int(out: &mut String, int: &Bound<'_, PyInt>) -> NativeResult<()> {
    if let Ok(small) = int.extract::<i64>() {
        use std::fmt::Write;
        let _ = write!(out, "{small}");
        return Ok(());
    }
    let digits = int.str().map_err(|e| NativeFailure::Other(e.to_string()))?;
    hash::write_int(out, py_str(&digits)?)
}

fn write_py_dict(out: &mut String, dict: &Bound<'_, PyDict>, depth: usize) -> NativeResult<()> {
    hash::check_depth(depth)?;
    let mut pairs: Vec<(Bound<'_, PyString>, Bound<'_, PyAny>)> = Vec::with_capacity(dict.len());
    for (key, value) in dict.iter() {
        let key = key.cast_into::<PyString>().map_err(|err| {
            NativeFailure::WrongType(format!(
                "keys must be str, not {}",
                type_name(err.into_inner().as_any())
            ))
        })?;
        pairs.push((key, value));
    }
    // Keys are borrowed from the Python strings (no copy per key).
    let mut entries: Vec<(&str, &Bound<'_, PyAny>)> = Vec::with_capacity(pairs.len());
    for (key, value) in &pairs {
        entries.push((py_str(key)?, value));
    }
    entries.sort_unstable_by(|a, b| hash::compare_keys(a.0, b.0));
    out.push('{');
    for (index, (key, value)) in entries.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        hash::write_str(out, key);
        out.push(':');
        write_py(out, value, depth + 1)?;
    }
    out.push('}');
    Ok(())
}

fn write_py_items<'py>(
    out: &mut String,
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    depth: usize,
) -> NativeResult<()> {
    hash::check_depth(depth)?;
    out.push('[');
    for (index, item) in items.enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_py(out, &item, depth + 1)?;
    }
    out.push(']');
    Ok(())
}

pub fn py_str<'a>(text: &'a Bound<'_, PyString>) -> NativeResult<&'a str> {
    text.to_str().map_err(|_| {
        NativeFailure::InvalidValue("string is not valid Unicode (a lone surrogate?)".to_owned())
    })
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "unknown".to_owned())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_hash, m)?)?;
    Ok(())
}
