"""``apply_edit``: exact, whitespace-tolerant, fuzzy; distinct errors with line ranges."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sf_native
from sf_native import EditAmbiguous, EditNoMatch, NativeError

SOURCE = """def greet(name):
    return f"Hello, {name}!"


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    args = parser.parse_args(argv)
    print(greet(args.name))
"""


def test_an_exact_match_is_replaced() -> None:
    result = sf_native.apply_edit(SOURCE, 'return f"Hello, {name}!"', 'return f"Hi, {name}!"')
    assert result.how == "exact"
    assert (result.start_line, result.end_line, result.similarity) == (2, 2, 1.0)
    assert 'return f"Hi, {name}!"' in result.text


def test_whitespace_differences_are_tolerated_and_indentation_kept() -> None:
    search = "parser.add_argument( 'name' )".replace("'", '"')
    search = 'parser.add_argument("name")\nargs  =  parser.parse_args(argv)'
    result = sf_native.apply_edit(
        SOURCE, search, 'parser.add_argument("who")\nargs = parser.parse_args(argv)'
    )
    assert result.how == "whitespace"
    assert (result.start_line, result.end_line) == (7, 8)
    assert '    parser.add_argument("who")\n    args = parser.parse_args(argv)\n' in result.text


def test_a_near_miss_is_found_fuzzily() -> None:
    search = '    parser.add_argument("nam")\n    args = parser.parse_arg(argv)'
    result = sf_native.apply_edit(
        SOURCE, search, '    parser.add_argument("who")\n    args = parser.parse_args(argv)'
    )
    assert result.how == "fuzzy"
    assert (result.start_line, result.end_line) == (7, 8)
    assert 0.8 <= result.similarity < 1.0


def test_no_match_names_the_best_candidate() -> None:
    with pytest.raises(EditNoMatch, match=r"line") as error:
        sf_native.apply_edit(SOURCE, "completely different text\nthat is nowhere", "x")
    assert isinstance(error.value, ValueError)
    assert isinstance(error.value, NativeError)


def test_an_ambiguous_match_names_both_places() -> None:
    text = "x = 1\ny = 2\nx = 1\n"
    with pytest.raises(EditAmbiguous, match=r"1.*3"):
        sf_native.apply_edit(text, "x = 1", "x = 3")


def test_bad_arguments_are_plain_value_errors() -> None:
    with pytest.raises(ValueError, match="empty"):
        sf_native.apply_edit(SOURCE, "", "x")
    with pytest.raises(ValueError, match="threshold"):
        sf_native.apply_edit(SOURCE, "greet", "x", threshold=1.5)


@given(st.text(alphabet="abc \n", max_size=60), st.text(alphabet="xyz", min_size=1, max_size=5))
def test_a_unique_exact_match_is_replaced_exactly(prefix: str, needle: str) -> None:
    text = prefix + "<<" + needle + ">>" + prefix
    result = sf_native.apply_edit(text, "<<" + needle + ">>", "[done]")
    assert result.how == "exact"
    assert result.text == text.replace("<<" + needle + ">>", "[done]", 1)
