"""One default for new sessions: the web form, ``sf session create`` and every other
creator start at ``NEW_SESSION_AXES`` (plan | manual | normal | deep)."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from agents_app.axes import NEW_SESSION_AXES
from agents_app.models import AgentSession, Project
from agents_app.services import session_create
from tests.cli import run_sf

pytestmark = pytest.mark.django_db
PLAN_DEEP = {
    "work_mode": "plan",
    "run_control": "manual",
    "permission_profile": "normal",
    "model_mode": "deep",
}


def axes_of(session: AgentSession) -> dict[str, str]:
    """The four axes a creator chooses; the surface is the creator's own."""
    axes = session.axes.as_dict()
    axes.pop("surface")
    return axes


def test_the_default_is_plan_mode_with_the_deep_model() -> None:
    assert NEW_SESSION_AXES == PLAN_DEEP


def test_the_web_form_and_the_cli_create_the_same_session(
    logged_in_client: Client, project: Project
) -> None:
    page = logged_in_client.get(reverse("project-detail", args=[project.pk])).content.decode()
    preselected = {
        axis: re.search(
            rf'<select name="{axis}".*?<option value="([a-z]+)" selected>', page, re.S
        ).group(1)  # type: ignore[union-attr]
        for axis in PLAN_DEEP
    }
    assert preselected == PLAN_DEEP, "the form offers the default"
    response = logged_in_client.post(
        reverse("project-detail", args=[project.pk]), {"title": "web", **preselected}
    )
    assert response.status_code == 302
    web = AgentSession.objects.get(title="web")

    code, out, _ = run_sf(
        "session",
        "create",
        "--project",
        str(project.pk),
        "--title",
        "cli",
        "--output-format",
        "json",
    )
    assert code == 0
    cli = AgentSession.objects.get(pk=json.loads(out)["id"])

    assert axes_of(web) == axes_of(cli) == PLAN_DEEP
    assert (web.surface, cli.surface) == ("web", "headless")


def test_any_creator_that_names_no_axes_gets_the_default(project: Project) -> None:
    assert axes_of(session_create(project=project)) == PLAN_DEEP
    named = session_create(project=project, axes={"model_mode": "fast"})
    assert axes_of(named) == {**PLAN_DEEP, "model_mode": "fast"}
