//! Canonical JSON and its SHA-256, following RFC 8785 (JCS) where it is defined:
//!
//! * object keys sorted by their UTF-16 code units, no insignificant whitespace;
//! * strings as UTF-8, escaping only `"`, `\` and control characters (short forms
//!   `\b \t \n \f \r`, otherwise `\u00xx`);
//! * floats in ECMAScript `Number#toString` form (shortest round trip, so `1.0` is
//!   `1` and `1e21` is `1e+21`), NaN and infinities rejected;
//! * integers (which JSON from Python may carry beyond 2^53) exactly, in decimal.
//!
//! The Python walk in `lib.rs` writes through the same functions as [`Value`].

use crate::errors::{NativeFailure, NativeResult};
use sha2::{Digest, Sha256};
use std::fmt::Write;

/// How deep arrays and objects may nest; deeper (or circular) input is rejected.
pub const MAX_DEPTH: usize = 512;

/// A JSON value for Rust callers and tests.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// An integer as its exact decimal digits (with an optional leading `-`).
    Int(String),
    Float(f64),
    Str(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

/// Canonical JSON text of `value`.
pub fn canonical_json(value: &Value) -> NativeResult<String> {
    let mut out = String::new();
    write_value(&mut out, value, 0)?;
    Ok(out)
}

/// Lower-case hex SHA-256 of the canonical JSON of `value`.
pub fn canonical_hash(value: &Value) -> NativeResult<String> {
    Ok(sha256_hex(canonical_json(value)?.as_bytes()))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

fn write_value(out: &mut String, value: &Value, depth: usize) -> NativeResult<()> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Int(digits) => write_int(out, digits)?,
        Value::Float(number) => write_float(out, *number)?,
        Value::Str(text) => write_str(out, text),
        Value::Array(items) => {
            check_depth(depth)?;
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(out, item, depth + 1)?;
            }
            out.push(']');
        }
        Value::Object(entries) => {
            check_depth(depth)?;
            let mut sorted: Vec<&(String, Value)> = entries.iter().collect();
            sorted.sort_by(|a, b| compare_keys(&a.0, &b.0));
            out.push('{');
            for (index, (key, item)) in sorted.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_str(out, key);
                out.push(':');
                write_value(out, item, depth + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

pub fn check_depth(depth: usize) -> NativeResult<()> {
    if depth >= MAX_DEPTH {
        return Err(NativeFailure::InvalidValue(format!(
            "nesting deeper than {MAX_DEPTH} levels (or a circular reference)"
        )));
    }
    Ok(())
}

/// JCS key order: compare UTF-16 code units, not code points or bytes.
///
/// UTF-8 byte order equals code-point order, which equals UTF-16 order except
/// when the first differing characters are one in U+E000..U+FFFF and one above
/// U+FFFF (a surrogate pair sorts below U+E000). So compare bytes, and only look
/// at the first differing characters in UTF-16.
pub fn compare_keys(a: &str, b: &str) -> std::cmp::Ordering {
    let Some(at) = a.bytes().zip(b.bytes()).position(|(x, y)| x != y) else {
        return a.len().cmp(&b.len());
    };
    // The bytes before `at` are equal, so both strings have a char boundary here.
    let start = (0..=at).rev().find(|&i| a.is_char_boundary(i)).unwrap_or(0);
    match (a[start..].chars().next(), b[start..].chars().next()) {
        (Some(x), Some(y)) => utf16_key(x).cmp(&utf16_key(y)),
        _ => a.len().cmp(&b.len()),
    }
}

/// The UTF-16 code units of `ch`, as a comparable pair.
fn utf16_key(ch: char) -> (u16, u16) {
    let mut units = [0u16; 2];
    let encoded = ch.encode_utf16(&mut units);
    (encoded[0], encoded.get(1).copied().unwrap_or(0))
}

pub fn write_int(out: &mut String, digits: &str) -> NativeResult<()> {
    let body = digits.strip_prefix('-').unwrap_or(digits);
    let valid = !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_digit())
        && (body == "0" || !body.starts_with('0'));
    if !valid {
        return Err(NativeFailure::InvalidValue(format!(
            "not an integer: {digits:?}"
        )));
    }
    if body == "0" {
        out.push('0');
    } else {
        out.push_str(digits);
    }
    Ok(())
}

pub fn write_str(out: &mut String, text: &str) {
    out.push('"');
    let mut start = 0;
    for (index, ch) in text.char_indices() {
        let escape = match ch {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\u{08}' => Some("\\b"),
            '\t' => Some("\\t"),
            '\n' => Some("\\n"),
            '\u{0c}' => Some("\\f"),
            '\r' => Some("\\r"),
            c if (c as u32) < 0x20 => None,
            _ => continue,
        };
        out.push_str(&text[start..index]);
        match escape {
            Some(seq) => out.push_str(seq),
            None => {
                let _ = write!(out, "\\u{:04x}", ch as u32);
            }
        }
        start = index + ch.len_utf8();
    }
    out.push_str(&text[start..]);
    out.push('"');
}

/// ECMAScript `Number#toString` for a finite double (RFC 8785 §3.2.2.3).
pub fn write_float(out: &mut String, number: f64) -> NativeResult<()> {
    if !number.is_finite() {
        return Err(NativeFailure::InvalidValue(format!(
            "{number} is not a JSON number (NaN and infinities have no canonical form)"
        )));
    }
    if number == 0.0 {
        out.push('0'); // also -0.0
        return Ok(());
    }
    if number < 0.0 {
        out.push('-');
    }
    // Rust's `{:e}` prints the shortest digits that round-trip, e.g. "1.2345e-7".
    let scientific = format!("{:e}", number.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let n = exponent + 1; // the decimal point sits after n digits
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{}", if n > 0 { "+" } else { "-" }, (n - 1).abs());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float(number: f64) -> String {
        let mut out = String::new();
        write_float(&mut out, number).unwrap();
        out
    }

    fn obj(entries: &[(&str, Value)]) -> Value {
        Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn floats_follow_ecmascript() {
        let cases = [
            (1.0, "1"),
            (-1.5, "-1.5"),
            (0.1, "0.1"),
            (-0.0, "0"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (1.5e-6, "0.0000015"),
            (123456789.125, "123456789.125"),
            (4.35, "4.35"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (333333333.3333333, "333333333.3333333"),
        ];
        for (number, expected) in cases {
            assert_eq!(float(number), expected, "for {number:e}");
        }
    }

    #[test]
    fn non_finite_floats_are_rejected() {
        for number in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut out = String::new();
            assert!(matches!(
                write_float(&mut out, number),
                Err(NativeFailure::InvalidValue(_))
            ));
        }
    }

    #[test]
    fn strings_escape_only_what_json_requires() {
        let mut out = String::new();
        write_str(&mut out, "a\"b\\c\n\u{1}é€😀/");
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001é€😀/\"");
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+FB01 sorts after U+1F600 in UTF-16 (0xD83D < 0xFB01) but before it in UTF-8.
        let value = obj(&[
            ("\u{fb01}", Value::Null),
            ("😀", Value::Null),
            ("b", Value::Null),
            ("a", Value::Null),
        ]);
        assert_eq!(
            canonical_json(&value).unwrap(),
            "{\"a\":null,\"b\":null,\"😀\":null,\"\u{fb01}\":null}"
        );
    }

    #[test]
    fn fast_key_order_agrees_with_utf16_order() {
        let keys = [
            "",
            "a",
            "ab",
            "b",
            "é",
            "\u{e000}",
            "\u{fb01}",
            "\u{ffff}",
            "😀",
            "😀a",
            "a😀",
            "\u{10000}",
            "z\u{e000}",
            "z😀",
            "é😀",
            "é\u{fb01}",
        ];
        for a in keys {
            for b in keys {
                let reference = a.encode_utf16().cmp(b.encode_utf16());
                assert_eq!(compare_keys(a, b), reference, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn key_order_does_not_change_the_hash() {
        let one = obj(&[
            ("x", Value::Int("1".into())),
            ("y", Value::Array(vec![Value::Bool(true), Value::Null])),
        ]);
        let two = obj(&[
            ("y", Value::Array(vec![Value::Bool(true), Value::Null])),
            ("x", Value::Int("1".into())),
        ]);
        assert_eq!(canonical_hash(&one).unwrap(), canonical_hash(&two).unwrap());
        assert_eq!(canonical_json(&one).unwrap(), "{\"x\":1,\"y\":[true,null]}");
    }

    #[test]
    fn different_values_hash_differently() {
        let one = obj(&[("x", Value::Int("1".into()))]);
        let two = obj(&[("x", Value::Int("2".into()))]);
        assert_ne!(canonical_hash(&one).unwrap(), canonical_hash(&two).unwrap());
    }

    #[test]
    fn hash_is_sha256_of_the_canonical_text() {
        // sha256("{}")
        assert_eq!(
            canonical_hash(&Value::Object(vec![])).unwrap(),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn integers_are_exact() {
        let big = Value::Int("123456789012345678901234567890".into());
        assert_eq!(
            canonical_json(&big).unwrap(),
            "123456789012345678901234567890"
        );
        assert!(canonical_json(&Value::Int("01".into())).is_err());
        assert_eq!(canonical_json(&Value::Int("-0".into())).unwrap(), "0");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let mut value = Value::Null;
        for _ in 0..(MAX_DEPTH + 1) {
            value = Value::Array(vec![value]);
        }
        assert!(matches!(
            canonical_json(&value),
            Err(NativeFailure::InvalidValue(_))
        ));
    }
}
