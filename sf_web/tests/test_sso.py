"""Single sign-on against a real OpenID provider on loopback (tests/oidc.py).

SF runs in the test's process (Django's client); everything between SF and the
provider goes over real HTTP: discovery, the JWKS, the token and userinfo endpoints.
The person's side at the provider (its authorization form) is posted with requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import reverse

from agents_app.models import (
    MembershipSource,
    Project,
    ProjectMembership,
    Role,
    SsoGroupRole,
    SsoIdentity,
)
from sf_web.tests.test_settings import load_settings
from tests.oidc import (
    Provider,
    copied_discovery,
    oidc_provider,
    provider_authorize,
    sso_settings,
    tampering_token_proxy,
    with_query,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider(settings: Any) -> Iterator[Provider]:
    with oidc_provider() as running:
        sso_settings(settings, running)
        yield running


@pytest.fixture
def projects(tmp_path: Path) -> dict[str, Project]:
    made = {
        name: Project.objects.create(name=name, repo_path=str(tmp_path / name)) for name in "abc"
    }
    SsoGroupRole.objects.create(group="dev", project=made["a"], role=Role.OPERATOR)
    SsoGroupRole.objects.create(group="leads", project=made["a"], role=Role.APPROVER)
    SsoGroupRole.objects.create(group="leads", project=made["b"], role=Role.ADMIN)
    return made


def alice(provider: Provider, groups: list[str]) -> None:
    provider.set_user(
        "alice-sub",
        {
            "preferred_username": "alice",
            "email": "alice@example.com",
            "given_name": "Alice",
            "groups": groups,
        },
    )


def sso_round_trip(client: Client, sub: str, **authorize_changes: str) -> tuple[str, str]:
    """Start at SF, answer the provider's form as ``sub``; the callback's path and query."""
    start = client.get(reverse("sso-login"))
    assert start.status_code == 302, start.content[:300]
    authorize_url = with_query(start["Location"], **authorize_changes)
    back = urlsplit(provider_authorize(authorize_url, sub))
    return back.path, back.query


def sso_log_in(client: Client, sub: str, **authorize_changes: str) -> Any:
    path, query = sso_round_trip(client, sub, **authorize_changes)
    return client.get(f"{path}?{query}")


def roles_of(username: str) -> dict[str, tuple[str, str]]:
    rows = ProjectMembership.objects.filter(user__username=username).select_related("project")
    return {m.project.name: (m.role, m.source) for m in rows}


def test_first_login_creates_the_user_and_maps_groups_to_roles(
    provider: Provider, projects: dict[str, Project]
) -> None:
    alice(provider, ["dev", "leads", "not-mapped"])
    client = Client()
    response = sso_log_in(client, "alice-sub")
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard")

    person = User.objects.get(username="alice")
    assert person.email == "alice@example.com"
    assert person.first_name == "Alice"
    assert not person.has_usable_password(), "an SSO account has no password to guess"
    identity = SsoIdentity.objects.get(user=person)
    assert (identity.issuer, identity.subject) == (provider.issuer, "alice-sub")
    assert identity.groups == ["dev", "leads", "not-mapped"]
    # dev and leads both map to a: the higher role wins; c is mapped by no group.
    assert roles_of("alice") == {"a": ("approver", "sso"), "b": ("admin", "sso")}
    members = client.get(reverse("project-members", args=[projects["b"].pk])).content.decode()
    assert 'data-member-source="sso"' in members, "b's admin page says where her role came from"
    dashboard = client.get(reverse("dashboard"))
    assert dashboard.status_code == 200
    assert dashboard.wsgi_request.user == person


def test_a_changed_group_claim_updates_roles_on_next_login(
    provider: Provider, projects: dict[str, Project], user: User
) -> None:
    # b has an admin besides alice, so that losing "leads" can take hers away.
    ProjectMembership.objects.create(project=projects["b"], user=user, role=Role.ADMIN)
    alice(provider, ["dev", "leads"])
    assert sso_log_in(Client(), "alice-sub").status_code == 302
    person = User.objects.get(username="alice")
    # A role given by hand is a person's decision: single sign-on leaves it alone.
    ProjectMembership.objects.create(project=projects["c"], user=person, role=Role.VIEWER)

    alice(provider, ["dev"])
    assert sso_log_in(Client(), "alice-sub").status_code == 302
    assert roles_of("alice") == {"a": ("operator", "sso"), "c": ("viewer", "manual")}
    assert User.objects.filter(username="alice").count() == 1, "the same person, not a new one"

    SsoGroupRole.objects.filter(group="dev").update(role=Role.VIEWER)  # an admin edits the table
    alice(provider, [])
    assert sso_log_in(Client(), "alice-sub").status_code == 302
    assert roles_of("alice") == {"c": ("viewer", "manual")}


def test_the_last_admin_of_a_project_keeps_the_role(
    provider: Provider, projects: dict[str, Project]
) -> None:
    alice(provider, ["leads"])
    assert sso_log_in(Client(), "alice-sub").status_code == 302
    alice(provider, [])
    assert sso_log_in(Client(), "alice-sub").status_code == 302
    assert roles_of("alice") == {"b": ("admin", "sso")}, "b would be left without an admin"


def test_a_state_that_no_login_started_is_refused(provider: Provider) -> None:
    alice(provider, [])
    client = Client()
    path, query = sso_round_trip(client, "alice-sub")
    forged = with_query(f"{path}?{query}", state="not-the-state-we-sent")
    response = client.get(forged)
    assert response.status_code == 403
    assert "state does not match a login started in this browser" in response.content.decode()
    assert not User.objects.filter(username="alice").exists()
    assert "_auth_user_id" not in client.session


def test_a_nonce_other_than_ours_is_refused(provider: Provider) -> None:
    alice(provider, [])
    client = Client()
    # The provider signs whatever nonce it was asked for: a token made for another login.
    response = sso_log_in(client, "alice-sub", nonce="a-nonce-from-another-login")
    assert response.status_code == 403
    assert "nonce is not the one this login sent" in response.content.decode()
    assert not User.objects.filter(username="alice").exists()


def test_an_id_token_altered_in_transit_is_refused(
    provider: Provider, projects: dict[str, Project], settings: Any
) -> None:
    alice(provider, ["dev"])

    def promote(claims: dict[str, Any]) -> None:
        claims["groups"] = ["leads"]

    token_endpoint = provider.discovery()["token_endpoint"]
    with tampering_token_proxy(token_endpoint, promote) as proxy:
        settings.OIDC_OP_TOKEN_ENDPOINT = proxy
        response = sso_log_in(Client(), "alice-sub")
    assert response.status_code == 403
    body = response.content.decode()
    assert "signature does not match the provider&#x27;s key" in body
    assert not User.objects.filter(username="alice").exists()


def test_a_discovery_document_of_another_issuer_is_refused(
    provider: Provider, settings: Any
) -> None:
    # A copy of the provider's document served from elsewhere: its keys and tokens are
    # the provider's, not this issuer's.
    with copied_discovery(provider.discovery()) as elsewhere:
        settings.SF_OIDC_ISSUER = elsewhere
        response = Client().get(reverse("sso-login"))
    assert response.status_code == 502
    assert f"names the issuer &#x27;{provider.issuer}&#x27;" in response.content.decode()


def test_a_local_account_of_the_same_name_is_not_taken_over(
    provider: Provider, django_user_model: type[User]
) -> None:
    django_user_model.objects.create_user("alice", password="local-password-1")
    alice(provider, [])
    response = sso_log_in(Client(), "alice-sub")
    assert response.status_code == 403
    assert "an SF account named &#x27;alice&#x27; already exists" in response.content.decode()
    assert not SsoIdentity.objects.exists()


def test_the_login_page_offers_both_ways_and_local_login_can_be_turned_off(
    provider: Provider, settings: Any, user: User
) -> None:
    page = Client().get(reverse("login")).content.decode()
    assert "Log in with TestIdP" in page
    assert 'name="password"' in page

    settings.SF_LOCAL_LOGIN = False
    settings.AUTHENTICATION_BACKENDS = [
        "axes.backends.AxesStandaloneBackend",
        "sf_web.sso.SsoBackend",
    ]
    page = Client().get(reverse("login")).content.decode()
    assert "Log in with TestIdP" in page
    assert 'name="password"' not in page
    refused = Client().post(reverse("login"), {"username": "ada", "password": "correct horse 42"})
    assert refused.status_code == 403
    assert "password login is turned off" in refused.content.decode()
    admin_login = Client().get("/admin/login/?next=/admin/")
    assert admin_login.status_code == 302
    assert admin_login["Location"] == "/login/?next=%2Fadmin%2F"


def test_a_role_set_by_hand_stops_following_the_groups(
    provider: Provider, projects: dict[str, Project]
) -> None:
    from agents_app.services import member_set_role
    from sf_core.actors import Actor

    alice(provider, ["dev"])
    assert sso_log_in(Client(), "alice-sub").status_code == 302
    member_set_role(project=projects["a"], username="alice", role=Role.VIEWER, actor=Actor.system())
    assert sso_log_in(Client(), "alice-sub").status_code == 302
    membership = ProjectMembership.objects.get(user__username="alice", project=projects["a"])
    assert (membership.role, membership.source) == (Role.VIEWER, MembershipSource.MANUAL)


def test_settings_need_an_issuer_and_a_way_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loaded = load_settings(
        monkeypatch, tmp_path, SF_OIDC_CLIENT_ID="sf", SF_OIDC_ISSUER="https://id.example.com"
    )
    assert loaded["SF_SSO_ENABLED"] is True
    assert "sf_web.sso.SsoBackend" in loaded["AUTHENTICATION_BACKENDS"]
    assert loaded["OIDC_OP_TOKEN_ENDPOINT"] == "", "read from the discovery document"
    with pytest.raises(ImproperlyConfigured, match="SF_OIDC_ISSUER: required"):
        load_settings(monkeypatch, tmp_path, SF_OIDC_CLIENT_ID="sf")
    with pytest.raises(ImproperlyConfigured, match="nobody could log in"):
        load_settings(monkeypatch, tmp_path, SF_LOCAL_LOGIN="0")
    loaded = load_settings(monkeypatch, tmp_path)
    assert loaded["SF_SSO_ENABLED"] is False
    assert "sf_web.sso.SsoBackend" not in loaded["AUTHENTICATION_BACKENDS"]


def test_a_provider_over_plain_http_in_production_is_sf_w006(settings: Any) -> None:
    from sf_web import checks

    settings.PRODUCTION, settings.SF_SSO_ENABLED = True, True
    settings.SF_OIDC_ISSUER = "http://login.example.com/realms/team"
    messages = checks.check_sso_transport(None)
    assert [m.id for m in messages] == ["sf.W006"]
    assert "http://login.example.com/realms/team" in messages[0].msg
    settings.SF_OIDC_ISSUER = "https://login.example.com/realms/team"
    assert checks.check_sso_transport(None) == []
    settings.PRODUCTION = False
    settings.SF_OIDC_ISSUER = "http://localhost:8080"
    assert checks.check_sso_transport(None) == []
