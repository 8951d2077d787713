"""sf_native.canonical_hash against a Python oracle of the same canonical form."""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sf_native

# Strings without lone surrogates (they are not Unicode text and are refused).
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(text, children, max_size=5),
    max_leaves=30,
)


def oracle_json(value: Any) -> str:
    """Python's own JSON encoder, adjusted to the canonical rules."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda key: key.encode("utf-16-be"))
        return "{" + ",".join(f"{oracle_json(k)}:{oracle_json(value[k])}" for k in keys) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(oracle_json(item) for item in value) + "]"
    if isinstance(value, float):
        return ecmascript_number(value)
    return json.dumps(value, ensure_ascii=False)


def ecmascript_number(value: float) -> str:
    """ECMAScript Number#toString from Python's shortest round-trip digits (repr)."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    parts = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in parts.digits)
    k = len(digits)
    n = int(parts.exponent) + k  # the decimal point sits after n digits
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        mantissa = digits[0] + (f".{digits[1:]}" if k > 1 else "")
        body = f"{mantissa}e{'+' if n > 0 else '-'}{abs(n - 1)}"
    return sign + body


def shuffled_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: shuffled_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [shuffled_keys(item) for item in value]
    return value


@given(json_values)
def test_it_matches_the_python_oracle(value: Any) -> None:
    expected = oracle_json(value)
    assert sf_native.canonical_json(value) == expected
    assert sf_native.canonical_hash(value) == hashlib.sha256(expected.encode()).hexdigest()


@given(json_values)
def test_key_order_never_changes_the_hash(value: Any) -> None:
    assert sf_native.canonical_hash(value) == sf_native.canonical_hash(shuffled_keys(value))


@given(json_values, json_values)
def test_different_values_hash_differently(one: Any, two: Any) -> None:
    if sf_native.canonical_json(one) != sf_native.canonical_json(two):
        assert sf_native.canonical_hash(one) != sf_native.canonical_hash(two)


def test_equal_inputs_in_any_key_order_hash_the_same() -> None:
    one = {"tool": "run_command", "input": {"cwd": ".", "argv": ["ls", "-la"]}}
    two = {"input": {"argv": ["ls", "-la"], "cwd": "."}, "tool": "run_command"}
    assert sf_native.canonical_hash(one) == sf_native.canonical_hash(two)
    assert sf_native.canonical_json(one) == (
        '{"input":{"argv":["ls","-la"],"cwd":"."},"tool":"run_command"}'
    )


def test_numbers_take_one_form() -> None:
    assert sf_native.canonical_hash({"n": 1}) == sf_native.canonical_hash({"n": 1.0})
    assert sf_native.canonical_json([1e21, 1e-7, -0.0, 0.1, 10**30]) == (
        "[1e+21,1e-7,0,0.1,1000000000000000000000000000000]"
    )


def test_unicode_is_kept_not_escaped() -> None:
    assert sf_native.canonical_json("é\u2028😀\x01") == '"é\u2028😀\\u0001"'
    assert sf_native.canonical_hash("é") != sf_native.canonical_hash("e\u0301")


def test_tuples_are_arrays() -> None:
    assert sf_native.canonical_hash((1, 2)) == sf_native.canonical_hash([1, 2])


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ({1: "x"}, TypeError, "keys must be str, not int"),
        ({"a": {1, 2}}, TypeError, "object of type set is not JSON-serializable"),
        (b"bytes", TypeError, "object of type bytes"),
        (object(), TypeError, "object of type object"),
        (math.nan, ValueError, "NaN is not a JSON number"),
        ([math.inf], ValueError, "inf is not a JSON number"),
        ("\ud800", ValueError, "lone surrogate"),
    ],
)
def test_non_json_input_raises_a_python_error(value: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        sf_native.canonical_hash(value)


def test_circular_and_too_deep_input_is_a_value_error_not_a_crash() -> None:
    circular: list[Any] = []
    circular.append(circular)
    with pytest.raises(ValueError, match="nesting deeper than 512"):
        sf_native.canonical_hash(circular)
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = {"k": deep}
    with pytest.raises(ValueError, match="nesting deeper than 512"):
        sf_native.canonical_hash(deep)


def test_large_input_hashes_like_hashlib() -> None:
    big = {"blob": "x" * 1_000_000, "items": list(range(10_000))}
    expected = hashlib.sha256(oracle_json(big).encode()).hexdigest()
    assert sf_native.canonical_hash(big) == expected


def test_the_module_reports_its_version() -> None:
    assert sf_native.__version__ == "0.1.0"
    assert issubclass(sf_native.NativeError, Exception)
