from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured

from sf_core.env import Env


def env(**values: str) -> Env:
    return Env(values)


def test_unset_and_blank_values_take_the_default() -> None:
    reader = env(BLANK="  ")
    assert reader.integer("MISSING", 7) == 7
    assert reader.flag("BLANK", True) is True
    assert reader.csv("MISSING", ["a"]) == ["a"]


@pytest.mark.parametrize(("raw", "expected"), [("1", True), ("YES", True), ("off", False)])
def test_booleans_accept_the_usual_spellings(raw: str, expected: bool) -> None:
    assert env(FLAG=raw).flag("FLAG", not expected) is expected


def test_a_bad_boolean_names_the_variable_and_the_choices() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"^SF_DEBUG: expected a boolean .*'maybe'"):
        env(SF_DEBUG="maybe").flag("SF_DEBUG", False)


def test_integers_are_checked_for_form_and_range() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"^N: expected a whole number, got '1.5'"):
        env(N="1.5").integer("N", 1)
    with pytest.raises(ImproperlyConfigured, match=r"^N: must be at least 0, got -1"):
        env(N="-1").integer("N", 1, minimum=0)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("90", timedelta(seconds=90)),
        ("500ms", timedelta(milliseconds=500)),
        ("5m", timedelta(minutes=5)),
        ("1.5h", timedelta(minutes=90)),
        ("1d", timedelta(days=1)),
    ],
)
def test_durations_take_units(raw: str, expected: timedelta) -> None:
    assert env(D=raw).duration("D", timedelta(0)) == expected


def test_a_bad_duration_says_what_a_duration_looks_like() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"^D: expected a duration such as 30, .*'ten'"):
        env(D="ten").duration("D", timedelta(0))
    with pytest.raises(ImproperlyConfigured, match=r"^D: must be at most 3600s, got 7200s"):
        env(D="2h").duration("D", timedelta(0), maximum=timedelta(hours=1))


def test_choices_list_what_is_accepted() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"^P: expected one of dev, prod, got 'test'"):
        env(P="test").choice("P", "dev", ("dev", "prod"))


def test_lists_reject_empty_items() -> None:
    assert env(L="a, b").csv("L") == ["a", "b"]
    with pytest.raises(ImproperlyConfigured, match=r"^L: expected a comma-separated list"):
        env(L="a,,b").csv("L")


def child_database_url_is_parsed_into_django_settings() -> None:
    url = env(
        DATABASE_URL="postgres://sf:p%40ss@db.example:6543/sfdb?sslmode=require"
    ).database_url("DATABASE_URL")
    assert url is not None
    assert url.as_django() == {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "sfdb",
        "USER": "sf",
        "PASSWORD": "p@ss",
        "HOST": "db.example",
        "PORT": "6543",
        "OPTIONS": {"sslmode": "require"},
    }


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("mysql://u@h/db", "expected a postgres:// or postgresql:// URL"),
        ("postgres://u@h", "expected a URL that names one database"),
        ("postgres://u@h:99999/db", "expected a URL with a numeric port"),
    ],
)
def test_bad_database_urls_are_refused(raw: str, message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=f"^DATABASE_URL: {message}"):
        env(DATABASE_URL=raw).database_url("DATABASE_URL")


def test_a_password_never_appears_in_an_error() -> None:
    with pytest.raises(ImproperlyConfigured) as caught:
        env(DATABASE_URL="mysql://u:hunter2@h/db").database_url("DATABASE_URL")
    assert "hunter2" not in str(caught.value)
    assert "***" in str(caught.value)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("http://127.0.0.1:6379", "expected a redis:// or rediss:// URL"),
        ("redis:///0", "expected a URL with a host"),
        ("redis://h:6379/zero", "expected a URL whose path is a database number"),
    ],
)
def test_bad_redis_urls_are_refused(raw: str, message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=f"^REDIS_URL: {message}"):
        env(REDIS_URL=raw).redis_url("REDIS_URL")


def test_secrets_have_a_minimum_length() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"^K: must be at least 50 characters long"):
        env(K="short").secret("K", min_length=50)


def test_http_urls_need_a_scheme_a_host_and_a_numeric_port() -> None:
    assert env(U="http://127.0.0.1:8080/v1/").http_url("U") == "http://127.0.0.1:8080/v1"
    assert env().http_url("U") is None
    for raw in ("127.0.0.1:8080", "ftp://h/v1", "http:///v1", "http://h:x/v1"):
        with pytest.raises(ImproperlyConfigured, match=r"^U: expected (an http|a URL)"):
            env(U=raw).http_url("U")
    with pytest.raises(ImproperlyConfigured) as caught:
        env(U="http://user:hunter2@h:x/").http_url("U")
    assert "hunter2" not in str(caught.value)
