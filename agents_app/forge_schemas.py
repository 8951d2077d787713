"""pydantic schemas of a project's forge settings (docs/forge.md): where its pull
requests and issues live, which token reaches it, and what an issue may start."""

from __future__ import annotations

import re
from enum import StrEnum
from urllib.parse import urlsplit

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sf_core.netguard import host_normal


class ForgeKind(StrEnum):
    GITHUB = "github"
    GITLAB = "gitlab"


class ForgeIssuesPolicy(BaseModel):
    """Optional: an open issue carrying ``label`` becomes an intent in a new session of
    the project (tasks_app/features/issues, docs/forge.md "Work from issues"). Its author
    has no SF role: the session runs at ``permission_profile`` (never unrestricted) and
    its plan waits for a person's acceptance in SF unless ``autonomous``."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1, max_length=100)
    permission_profile: str = "normal"
    autonomous: bool = False

    @field_validator("label")
    @classmethod
    def _label(cls, label: str) -> str:
        if not label.strip() or "," in label:
            raise ValueError("label must be one label's name (not blank, no comma)")
        return label.strip()

    @field_validator("permission_profile")
    @classmethod
    def _profile(cls, profile: str) -> str:
        if profile not in ISSUE_PROFILES:
            raise ValueError(
                f"permission_profile must be one of {', '.join(ISSUE_PROFILES)}, not "
                f"{profile!r}: an issue's author has no SF role, so its session never "
                "runs unrestricted"
            )
        return profile


ISSUE_PROFILES = ("restricted", "normal", "trusted")


class ForgePolicy(BaseModel):
    """Optional: a task waiting for a person's review is pushed to ``remote`` and opened
    as a pull request on the forge; a review there comes back to SF (tasks_app/features/forge.py).
    The token is named by the variable that holds it, never stored in the policy."""

    model_config = ConfigDict(extra="forbid")

    kind: ForgeKind
    api_url: str = Field(min_length=1, max_length=500)  # https://api.github.com, …/api/v4
    repository: str = Field(min_length=1, max_length=300)  # owner/name, or GitLab's path
    remote: str = Field(default="origin", min_length=1, max_length=200)
    # The variable holding the token: SF_FORGE_TOKEN or SF_FORGE_TOKEN_<NAME>, never
    # another of the worker's variables (it is sent to the forge as a credential).
    token_env: str = Field(default="SF_FORGE_TOKEN", max_length=100)
    issues: ForgeIssuesPolicy | None = None  # work from labelled issues

    @field_validator("api_url")
    @classmethod
    def _http(cls, url: str) -> str:
        if not url.startswith(("https://", "http://")):
            raise ValueError("api_url must be an http(s) URL")
        return url.rstrip("/")

    @field_validator("token_env")
    @classmethod
    def _token_variable(cls, name: str) -> str:
        problem = forge_token_problem(name)
        if problem:
            raise ValueError(problem)
        return name

    @model_validator(mode="after")
    def _public_api(self) -> ForgePolicy:
        problem = forge_api_problem(self.kind, self.api_url)
        if problem:
            raise ValueError(problem)
        return self


# The forges' public APIs; any other api_url must be on a host a server admin listed
# in SF_FORGE_API_HOSTS (a self-hosted GitLab, GitHub Enterprise).
FORGE_PUBLIC_API = {
    ForgeKind.GITHUB: "https://api.github.com",
    ForgeKind.GITLAB: "https://gitlab.com/api/v4",
}
FORGE_TOKEN = re.compile(r"^SF_FORGE_TOKEN(_[A-Z0-9_]{1,64})?$")


def forge_token_problem(name: str) -> str:
    """Why ``name`` may not hold a forge token ('' when it may)."""
    if FORGE_TOKEN.match(name):
        return ""
    return (
        f"token_env must be SF_FORGE_TOKEN or start with SF_FORGE_TOKEN_ "
        f"(upper-case letters, digits, _), not {name!r}: the variable's value is sent "
        "to the forge"
    )


def forge_api_problem(kind: str, url: str) -> str:
    """Why ``url`` may not be a forge's API ('' when it may): the forge's public API,
    or a host the server's ``SF_FORGE_API_HOSTS`` lists."""
    if url.rstrip("/") == FORGE_PUBLIC_API.get(ForgeKind(kind)):
        return ""
    parts = urlsplit(url)
    listed = {host_normal(h) for h in settings.SF_FORGE_API_HOSTS}
    if parts.hostname and not parts.username and host_normal(parts.hostname) in listed:
        return ""
    public = ", ".join(f"{k.value}: {v}" for k, v in FORGE_PUBLIC_API.items())
    return (
        f"api_url {url} is neither the forge's public API ({public}) nor on a host "
        "the server's SF_FORGE_API_HOSTS lists"
    )
