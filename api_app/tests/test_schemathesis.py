"""schemathesis against the OpenAPI document a real daphne serves: every operation with
an admin's token, with none, and with a token of a person who sees none of the objects.

Every answer must conform to the document (status, content type, body schema; errors
as problem+json), never be a 5xx, be 401 without a token, and never show a stranger
anything of the admin's (404 for each of their objects). Each generated case is sent
as generated and once more with its path ids pointing at real objects, so the calls
reach the code behind the lookups. Bounded for CI: a few examples per operation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.contrib.auth.models import User
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from agents_app.models import ProjectMembership, RiskDecision, Role, TraceEvent
from agents_app.services import project_create, session_create
from api_app.tokens import token_create
from conftest import make_git_repo
from tasks_app.models import PlanRequest, Unit
from tasks_app.tests.conftest import make_plan, task_data
from tests.processes import WebProcess

# One worker runs the module under pytest-xdist (--dist loadgroup): one daphne for it.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.xdist_group("schemathesis"),
]
PATCH = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
SECRET_TITLE = "the admin's private session"  # must never reach the stranger


@dataclass(frozen=True)
class World:
    admin: dict[str, str]
    stranger: dict[str, str]
    ids: dict[str, Any]  # path parameter -> a real object of the admin's


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: Any) -> Iterator[WebProcess]:
    web = WebProcess(
        extra_env={"SF_API_EVENTS_MAX_AGE": "500ms", "SF_API_EVENTS_HEARTBEAT": "200ms"}
    )
    web.start()
    try:
        yield web
    finally:
        web.stop()


@pytest.fixture
def world(user: User, staff_user: User, tmp_path: Path) -> World:
    project = project_create(name="sample", repo_path=str(make_git_repo(tmp_path / "repo")))
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)
    session = session_create(project=project, created_by=user, title=SECRET_TITLE, axes={})
    plan = make_plan(session, task_data("a"), task_data("b", depends_on=["a"]))
    task = plan.tasks.get(key="a")
    unit = Unit.objects.create(task=task, attempt=1, checkpoint_patch=PATCH)
    TraceEvent.objects.create(
        session=session, unit=unit, seq=1, kind="tool_call", name="read_file", payload={"p": 1}
    )
    decision = RiskDecision.objects.create(
        session=session,
        tool="run_command",
        input_normalized={"command": "rm -rf build"},
        input_hash="x" * 64,
        risk_class="destructive",
        decision="ask",
        rule="test",
        work_mode="build",
        run_control="manual",
        permission_profile="normal",
        model_mode="smart",
        surface="web",
        review_status="pending",
    )
    request = PlanRequest.objects.create(session=session, intent="do it")
    ids = {
        "project_id": project.pk,
        "session_id": session.pk,
        "plan_id": plan.pk,
        "task_id": task.pk,
        "unit_id": unit.pk,
        "decision_id": decision.pk,
        "request_id": request.pk,
    }
    return World(admin=_bearer(user), stranger=_bearer(staff_user), ids=ids)


def _bearer(user: User) -> dict[str, str]:
    return {"Authorization": f"Bearer {token_create(user=user, name='fuzz').secret}"}


# Schema-valid input SF still refuses, as a problem: a path that is no repository, a
# command the grammar does not know, a plan file that is no plan, an event id this
# server never gave. The document cannot say these; ``refusals_are_problems`` checks
# that each such answer is a problem with one of SF's refusal codes.
ACCEPTED = ["2xx", "3xx", "400", "401", "403", "404", "409", "422", "429"]
REFUSALS = {"rejected", "command-rejected", "plan-invalid", "validation", "conflict"}


@pytest.fixture
def api_schema(server: WebProcess, world: World) -> Any:
    config = schemathesis.Config.from_dict(
        {"checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}}}
    )
    return schemathesis.openapi.from_url(server.url + "/api/openapi.json", config=config)


def refusals_are_problems(case: Any, response: Any, on_real: bool) -> None:
    if case.meta.generation.mode.is_positive and response.status_code in (400, 422):
        assert response.headers["content-type"] == ["application/problem+json"]
        assert response.json()["code"] in REFUSALS, response.text


FUZZ = settings(
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: report the first failure
)
Expect = Callable[[Any, Any, bool], None]  # (case, response, on the admin's objects)


def fuzz(
    api_schema: Any,
    server: WebProcess,
    world: World,
    headers: dict[str, str],
    *,
    examples: int,
    expect: Expect,
) -> None:
    """Every operation: valid and invalid data, and valid data on the admin's objects.
    Each answer passes schemathesis's checks and ``expect``; failures are collected
    per operation and reported together."""
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 20
    failures = [
        failure
        for operation in operations
        if (failure := _fuzz_one(operation, server, world, headers, examples, expect))
    ]
    assert not failures, "\n\n".join(failures)


def _fuzz_one(
    operation: Any,
    server: WebProcess,
    world: World,
    headers: dict[str, str],
    examples: int,
    expect: Expect,
) -> str | None:
    names = re.findall(r"{(\w+)}", operation.path)
    real = {name: world.ids[name] for name in names if name in world.ids}
    strategies = [operation.as_strategy(mode) for mode in GenerationMode]
    if real:
        strategies.append(operation.as_strategy(path_parameters=real))

    @settings(FUZZ, max_examples=examples * len(strategies))
    @given(case=st.one_of(strategies))
    def run(case: Any) -> None:
        response = case.call_and_validate(base_url=server.url, headers=headers, timeout=30)
        assert response.status_code < 500, response.text
        params = case.path_parameters or {}
        on_real = bool(real) and all(params.get(k) == v for k, v in real.items())
        expect(case, response, on_real)

    try:
        run()
    except (
        Exception,
        BaseExceptionGroup,
    ) as exc:  # one operation's failure must not hide the others'
        notes = "\n".join(getattr(exc, "__notes__", []))
        return f"{operation.label}: {exc}\n{notes}"
    return None


def test_an_admin_token_gets_conforming_answers(
    api_schema: Any, server: WebProcess, world: World
) -> None:
    fuzz(api_schema, server, world, world.admin, examples=6, expect=refusals_are_problems)


def test_no_token_is_401_everywhere(api_schema: Any, server: WebProcess, world: World) -> None:
    def expect(case: Any, response: Any, on_real: bool) -> None:
        assert response.status_code == 401, response.text
        assert response.json()["code"] == "unauthenticated"

    fuzz(api_schema, server, world, {}, examples=2, expect=expect)


def test_a_stranger_sees_none_of_the_objects(
    api_schema: Any, server: WebProcess, world: World
) -> None:
    def expect(case: Any, response: Any, on_real: bool) -> None:
        if on_real:  # invalid input may be refused first; it reveals nothing
            assert response.status_code in (404, 422), response.text
        assert SECRET_TITLE not in response.text

    fuzz(api_schema, server, world, world.stranger, examples=3, expect=expect)
