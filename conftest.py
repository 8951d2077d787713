"""Fixtures shared by every test package."""

from __future__ import annotations

import asyncio
import atexit
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from sf_web.asgi import application

ORIGIN = (b"origin", b"http://127.0.0.1")
HOST = b"127.0.0.1"


PASSWORD = "correct horse 42"


@pytest.fixture(autouse=True)
def _no_user_skills(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user-level skill folder of whoever runs the tests is not the tests' business:
    each test starts with an empty one (a test that wants user skills writes its own)."""
    monkeypatch.setenv("SF_USER_SKILLS", str(tmp_path_factory.mktemp("user-skills")))


@pytest.fixture(autouse=True)
def _no_resource_left_open(request: pytest.FixtureRequest) -> Iterator[None]:
    """An unclosed socket, file or event loop is found by the garbage collector, which
    may run in any later test: pytest's unraisable check then failed whatever test was
    running (CI blamed native/tests and schemathesis for a socket another test left).
    Collect after each test and fail *that* test with what it left open.

    A full collection costs 0.3-0.8 s with Django, litellm and schemathesis loaded, so
    what survives a test is frozen (``gc.freeze``): the next collection looks only at
    what the next test allocated."""
    yield
    left: list[str] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: left.append(_unraisable_text(unraisable))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)  # raised in __del__: unraisable
            gc.collect()
    finally:
        sys.unraisablehook = previous
        gc.freeze()
    if left:
        pytest.fail(f"{request.node.nodeid} left a resource open:\n" + "\n".join(left))


def _unraisable_text(unraisable: Any) -> str:
    """What was left, and where it was made when tracemalloc runs (PYTHONTRACEMALLOC=20)."""
    text = f"{unraisable.err_msg or 'Exception ignored in'}: {unraisable.object!r}"
    if unraisable.exc_value is not None:
        text += f": {unraisable.exc_value}"
    made = tracemalloc.get_object_traceback(unraisable.object)
    if made is not None:
        text += "\nallocated at (most recent call last):\n" + "\n".join(made.format())
    return text


@pytest.fixture(scope="session", autouse=True)
def _flush_by_delete() -> Iterator[None]:
    """A transactional test (``transaction=True``, the browser and process tests) ends
    with Django's flush: one TRUNCATE of every table, which gives each table and index
    new files; 0.3-2 s a test, most of such a test's teardown. The tables hold a few
    rows: DELETE empties them in milliseconds, in one transaction (the flush's), in any
    order (every foreign key is DEFERRABLE INITIALLY DEFERRED, checked at the commit).
    Sequences go on either way (the flush's reset_sequences=False); a flush that asks
    for more (reset_sequences, CASCADE) gets Django's own."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(
        self: DatabaseOperations,
        style: Any,
        tables: Sequence[str],
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if reset_sequences or allow_cascade or not tables:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        delete = f"{style.SQL_KEYWORD('DELETE')} {style.SQL_KEYWORD('FROM')}"
        return [f"{delete} {style.SQL_FIELD(self.quote_name(table))};" for table in tables]

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        DatabaseOperations.sql_flush = truncate  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _close_the_event_loop_litellm_leaves() -> Iterator[None]:
    """litellm's service logger asks a blocking caller for ``asyncio.get_event_loop()``,
    which makes the main thread an event loop and keeps it open. pytest-asyncio later
    replaces the current loop, and the dropped one is garbage-collected unclosed during
    some unrelated test, which then fails with a ResourceWarning (CI did, at random).
    Close an idle loop a test left as the main thread's current loop, where it was made."""
    yield
    policy = asyncio.get_event_loop_policy()
    loop = getattr(getattr(policy, "_local", None), "_loop", None)
    if loop is not None and not loop.is_running() and not loop.is_closed():
        loop.close()
        policy.set_event_loop(None)


@pytest.fixture(autouse=True)
def _no_provider_left_rate_limited() -> Iterator[None]:
    """A 429 one test scripted must not make the next test's model calls wait."""
    yield
    from agents_app.runtime.ratelimit import provider_limits_clear

    provider_limits_clear()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """pytest-django's test database, and a copy of it made now, while no other process
    of the run is connected to it (``tests.processes.pristine_name``: the benchmark
    smoke run copies it for each script; about a second)."""
    import psycopg
    from django.db import connection

    from tests.processes import maintenance_dsn, pristine_name

    with django_db_blocker.unblock():
        name = connection.settings_dict["NAME"]
        connection.close()  # PostgreSQL copies only a database nobody is connected to
        copy = pristine_name(name)
        with psycopg.connect(maintenance_dsn(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{copy}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{name}"')
    yield
    with django_db_blocker.unblock(), psycopg.connect(maintenance_dsn(), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{copy}" WITH (FORCE)')


@pytest.fixture(scope="session")
def password_hash() -> str:
    """Hashing a password costs ~0.3 s by design; hash the test password once."""
    from django.contrib.auth.hashers import make_password

    return make_password(PASSWORD)


@pytest.fixture
def user(django_user_model: type[User], password_hash: str) -> User:
    return django_user_model.objects.create(username="ada", password=password_hash)


@pytest.fixture
def staff_user(django_user_model: type[User], password_hash: str) -> User:
    return django_user_model.objects.create(username="grace", password=password_hash, is_staff=True)


@pytest.fixture
def logged_in_client(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def session_cookie(client: Client, user: User) -> bytes:
    """A ``cookie`` header value carrying a logged-in session for ``user``."""
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def websocket(
    path: str,
    *,
    cookie: bytes | None = None,
    origin: bytes | None = ORIGIN[1],
    host: bytes | None = HOST,
) -> WebsocketCommunicator:
    # A browser always sends Host; the origin check compares the origin with it.
    headers: list[tuple[bytes, bytes]] = [(b"host", host)] if host is not None else []
    if origin is not None:
        headers.append((b"origin", origin))
    if cookie is not None:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, path, headers=headers)


def make_git_repo(path: Path, *, branch: str = "main") -> Path:
    """A real git repository with one commit on ``branch``: a copy of one that git made
    once per test process (six git processes per repository made ~400 of them per run).
    git refreshes the copied index's file stamps on first use, as for any copied repo."""
    template = _git_template(branch)
    path.mkdir(parents=True, exist_ok=True)
    shutil.copytree(template, path, symlinks=True, dirs_exist_ok=True)
    return path


_GIT_TEMPLATES: dict[str, Path] = {}


def _git_template(branch: str) -> Path:
    if branch not in _GIT_TEMPLATES:
        parent = tempfile.mkdtemp(prefix="sf-test-git-template-")
        atexit.register(shutil.rmtree, parent, True)
        path = Path(parent) / "repo"
        path.mkdir()
        for args in (
            ["init", "-q", "-b", branch],
            ["config", "user.email", "sf-tests@example.com"],
            ["config", "user.name", "SF tests"],
        ):
            subprocess.run(["git", *args], cwd=path, check=True)
        (path / "README.md").write_text("# sample\n")
        subprocess.run(["git", "add", "README.md"], cwd=path, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=path, check=True)
        _GIT_TEMPLATES[branch] = path
    return _GIT_TEMPLATES[branch]


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo")


@pytest.fixture
def project(git_repo: Path, user: User) -> Any:
    """A project whose admin is ``user`` (registered at the shell, as the server's owner
    does, so outside SF_REPO_ROOTS; ``user`` is made admin as its registrant would be)."""
    from agents_app.models import ProjectMembership, Role
    from agents_app.services import project_create

    project = project_create(name="sample", repo_path=str(git_repo))
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)
    return project


@pytest.fixture
def stale_lock(project: Any) -> Path:
    """A git lock a killed git left in the project's repository long ago (older than
    GIT_LOCK_STALE_SECONDS): what the doctor's locks.dead check finds and removes."""
    lock = Path(project.repo_path, ".git", "index.lock")
    lock.write_text("")
    os.utime(lock, (1_000_000_000, 1_000_000_000))
    return lock


@pytest.fixture
def registrar(user: User, project: Any, settings: Any, tmp_path: Path) -> User:
    """``user`` may register repositories: holds the register-repository permission
    (a superuser granted it), and the test's temporary directory is an allowed root."""
    settings.SF_REPO_ROOTS = [str(tmp_path.resolve())]
    return may_register(user)


def may_register(user: User) -> User:
    """Grant ``user`` the register-repository permission, as a superuser would in the
    admin; a fresh instance (Django caches a user's permissions on the instance)."""
    from django.contrib.auth.models import Permission

    user.user_permissions.add(Permission.objects.get(codename="register_repository"))
    return User.objects.get(pk=user.pk)


def grant(user: User, project: Any, role: str | None) -> None:
    """Give ``user`` exactly ``role`` on ``project`` (None: no membership)."""
    from agents_app.models import ProjectMembership

    ProjectMembership.objects.filter(project=project, user=user).delete()
    if role is not None:
        ProjectMembership.objects.create(project=project, user=user, role=role)


@pytest.fixture
def agent_session(project: Any, user: User) -> Any:
    from agents_app.services import session_create

    # A chat session, not the new-session default (plan | deep): many tests start from
    # chat | manual | normal | smart and change one axis at a time.
    return session_create(
        project=project,
        created_by=user,
        title="try it",
        axes={"work_mode": "chat", "model_mode": "smart"},
    )


@pytest.fixture
def reviewer(staff_user: User, agent_session: Any) -> User:
    """An approver of ``agent_session``'s project: who may review its risk decisions."""
    grant(staff_user, agent_session.project, "approver")
    return staff_user
