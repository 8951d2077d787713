"""``env_file_load``: the checkout's ``.sf/env`` read by every entry point."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from sf_core.env import env_file_load, env_file_load_checkout


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "env"
    path.write_text(text, encoding="utf-8")
    return path


def test_it_reads_key_value_lines_and_skips_comments_and_blanks(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "# written by scripts/setup.sh\n\nDATABASE_URL=postgres://h/sf_1\n"
        "  # indented comment\nexport REDIS_URL = redis://h:6379/0\n",
    )
    environ: dict[str, str] = {}
    loaded = env_file_load(path, environ)
    assert environ == {"DATABASE_URL": "postgres://h/sf_1", "REDIS_URL": "redis://h:6379/0"}
    assert loaded == environ


def test_matching_quotes_are_removed_and_inner_text_kept(tmp_path: Path) -> None:
    path = write(tmp_path, "A=\"two words\"\nB='it''s'\nC=\"a # not a comment\"\nD=\nE=a=b\n")
    environ: dict[str, str] = {}
    env_file_load(path, environ)
    assert environ == {
        "A": "two words",
        "B": "it''s",
        "C": "a # not a comment",
        "D": "",
        "E": "a=b",
    }


def test_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "DATABASE_URL=postgres://h/from_file\nSF_CELERY_QUEUE=q-file\n")
    environ = {"DATABASE_URL": "postgres://h/from_shell"}
    loaded = env_file_load(path, environ)
    assert environ == {"DATABASE_URL": "postgres://h/from_shell", "SF_CELERY_QUEUE": "q-file"}
    assert loaded == {"SF_CELERY_QUEUE": "q-file"}


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("A=1\nthis is not a setting\n", 2, "expected KEY=VALUE"),
        ("A=1\n\n1BAD=x\n", 3, "expected KEY=VALUE"),
        ('SECRET="sk-unclosed\n', 1, "SECRET: the quote is not closed"),
    ],
)
def test_a_bad_line_names_the_file_and_line_but_not_its_text(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ImproperlyConfigured) as caught:
        env_file_load(path, {})
    assert str(caught.value).startswith(f"{path}, line {line}: ")
    assert message in str(caught.value)
    assert "sk-unclosed" not in str(caught.value)


def test_the_checkout_file_is_optional_and_sf_env_file_chooses_or_disables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SF_ENV_FILE", raising=False)
    # Recorded as unset first, so the undo removes what the loader sets below.
    monkeypatch.setenv("SF_TEST_FROM_FILE", "")
    monkeypatch.delenv("SF_TEST_FROM_FILE")
    assert env_file_load_checkout(tmp_path) == {}  # no .sf/env: nothing to do
    (tmp_path / ".sf").mkdir()
    (tmp_path / ".sf" / "env").write_text("SF_TEST_FROM_FILE=checkout\n")
    monkeypatch.setenv("SF_ENV_FILE", "")
    assert env_file_load_checkout(tmp_path) == {}
    monkeypatch.setenv("SF_ENV_FILE", str(write(tmp_path, "SF_TEST_FROM_FILE=chosen\n")))
    assert env_file_load_checkout(tmp_path) == {"SF_TEST_FROM_FILE": "chosen"}
    monkeypatch.delenv("SF_TEST_FROM_FILE")
    monkeypatch.delenv("SF_ENV_FILE")
    assert env_file_load_checkout(tmp_path) == {"SF_TEST_FROM_FILE": "checkout"}
