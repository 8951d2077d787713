"""sf.W005: a configured model without a known price is named by ``manage.py check``,
and the session page says which models a session called were charged $0."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client, override_settings

from agents_app.models import AgentSession, CallStage, ModelCall, Project
from sf_web import checks

pytestmark = pytest.mark.django_db
SELF_HOSTED = "openai/sf-selfhosted-coder"
PRICE = {"input_per_token": "0.000001", "output_per_token": "0.000002"}


def warned() -> list[str]:
    return [m.msg for m in checks.check_model_prices(None) if m.id == "sf.W005"]


@override_settings(SF_MODEL_SMART=SELF_HOSTED, SF_MODEL_DEEP="openai/gpt-4o", SF_MODEL_FAST="")
def test_an_environment_model_litellm_cannot_price_is_named() -> None:
    (message,) = warned()
    assert SELF_HOSTED in message
    assert "SF_MODEL_SMART" in message


@override_settings(SF_MODEL_SMART=SELF_HOSTED, SF_MODEL_DEEP="", SF_MODEL_FAST="")
def test_a_project_price_silences_the_warning(project: Project) -> None:
    project.policy = {"prices": {SELF_HOSTED: PRICE}}
    project.save()
    assert warned() == []


@override_settings(SF_MODEL_SMART="openai/gpt-4o", SF_MODEL_DEEP="", SF_MODEL_FAST="")
def test_a_project_model_override_without_a_price_is_named(project: Project) -> None:
    project.policy = {"models": {"deep": {"model": SELF_HOSTED}}}
    project.save()
    (message,) = warned()
    assert f"project {project.name} (models.deep)" in message


def test_manage_py_check_runs_the_price_check() -> None:
    with (
        override_settings(SF_MODEL_SMART=SELF_HOSTED),
        pytest.raises(SystemCheckError) as raised,
    ):
        call_command("check", "--fail-level", "WARNING")
    assert "sf.W005" in str(raised.value)


def test_the_session_page_names_a_model_charged_nothing(
    client: Client, user: User, agent_session: AgentSession
) -> None:
    client.force_login(user)
    assert b"data-unpriced-models" not in client.get(f"/sessions/{agent_session.pk}/").content
    ModelCall.objects.create(
        session=agent_session, stage=CallStage.PLAN, model=SELF_HOSTED, priced=False
    )
    page = client.get(f"/sessions/{agent_session.pk}/").content.decode()
    assert "data-unpriced-models" in page
    assert f"No known price for {SELF_HOSTED}" in page


@override_settings(SF_MODEL_SMART=SELF_HOSTED, SF_MODEL_DEEP=SELF_HOSTED, SF_MODEL_FAST=SELF_HOSTED)
def test_one_model_behind_every_mode_is_named_once(project: Project) -> None:
    project.policy = {"models": {"deep": {"model": SELF_HOSTED}, "fast": {"model": SELF_HOSTED}}}
    project.save()
    (message,) = warned()
    assert "SF_MODEL_FAST, SF_MODEL_SMART, SF_MODEL_DEEP" in message
    assert f"project {project.name} (models.deep, models.fast)" in message


@override_settings(SF_MODEL_SMART=SELF_HOSTED, SF_MODEL_DEEP="", SF_MODEL_FAST="")
def test_a_policy_this_host_cannot_parse_is_named_and_the_others_still_checked(
    project: Project,
) -> None:
    """A worker host without the record URL prefix another host lists: the check names
    the project (before, it raised and the worker never started)."""
    Project.objects.filter(pk=project.pk).update(
        policy={"record": {"url": "file:///srv/records/sample.git"}}
    )
    with override_settings(SF_RECORD_URL_PREFIXES=[]):
        messages = checks.check_model_prices(None)
    (unreadable,) = [m.msg for m in messages if m.id == "sf.W016"]
    assert "project sample" in unreadable
    assert "SF_RECORD_URL_PREFIXES" in unreadable
    assert [m for m in messages if m.id == "sf.W005"]  # the environment's model still named
