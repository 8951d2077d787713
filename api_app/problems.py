"""Errors as RFC 9457 problem details (``application/problem+json``) with stable codes.

``type`` is ``/api/problems/<code>``; the code is what a client branches on, ``title``
is the code's fixed wording and ``detail`` the one-line message for people. Validation
problems add ``errors`` (one per field: ``loc``, ``msg``, ``type``).
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.errors import AuthorizationError as NinjaAuthorizationError
from pydantic import BaseModel

from agents_app.access import AccessDenied
from sf_core.errors import CommandRejected, InvalidTransition, NotAllowed, PlanInvalid, SfError

logger = logging.getLogger("sf.api")
PROBLEM_TYPE = "application/problem+json"
PROBLEM_BASE = "/api/problems/"

TITLES: dict[str, str] = {
    "validation": "The request does not match the schema",
    "unauthenticated": "A valid API token is needed",
    "forbidden": "Your role on the project does not allow this",
    "not-found": "No such object, or not visible to you",
    "conflict": "The object's state does not allow this",
    "idempotency-conflict": "The Idempotency-Key was used with another request",
    "command-rejected": "The command was rejected",
    "plan-invalid": "The plan is invalid",
    "rejected": "SF refused the request",
    "bad-request": "The request could not be read",
    "method-not-allowed": "This path does not take that method",
    "http": "HTTP error",
    "internal": "SF failed to answer; the error is logged",
}


class Problem(BaseModel):
    """An RFC 9457 problem document, as every error of the API is answered."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[dict[str, Any]] | None = None


# The problems every route may answer with (401 is added to each secured operation
# of the document by ``api.SfApi``).
ERRORS: dict[int, type] = {400: Problem, 403: Problem, 404: Problem, 409: Problem, 422: Problem}


class ApiProblem(Exception):
    """Raised by the API's own code to answer with a problem."""

    def __init__(
        self, status: int, code: str, detail: str, errors: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail, self.errors = status, code, detail, errors

    @classmethod
    def invalid(cls, source: str, name: str, message: str) -> ApiProblem:
        """A 422 ``validation`` problem about one input, named as ninja names fields."""
        error = {"loc": [source, name], "msg": message, "type": "value_error"}
        return cls(422, "validation", f"{name}: {message}", [error])


def problem(
    status: int, code: str, detail: str, errors: list[dict[str, Any]] | None = None
) -> Problem:
    return Problem(
        type=PROBLEM_BASE + code,
        title=TITLES.get(code, code),
        status=status,
        detail=detail,
        code=code,
        errors=errors,
    )


def problem_response(
    status: int, code: str, detail: str, errors: list[dict[str, Any]] | None = None
) -> HttpResponse:
    body = problem(status, code, detail, errors)
    return HttpResponse(
        body.model_dump_json(exclude_none=True), status=status, content_type=PROBLEM_TYPE
    )


def problem_of(exc: Exception) -> Problem | None:
    """The problem an error of SF's own answers with (every interface: the API's
    problem+json, the MCP server's tool errors), or None for an unexpected error."""
    if isinstance(exc, ApiProblem):
        return problem(exc.status, exc.code, exc.detail, exc.errors)
    if isinstance(exc, SfError):
        return problem(exc.status_code, sf_error_code(exc), str(exc))
    return None


HTTP_CODES = {400: "bad-request", 401: "unauthenticated", 403: "forbidden", 404: "not-found"}


def sf_error_code(exc: SfError) -> str:
    """The stable code of an SF error, by its class (the most specific first)."""
    for kind, code in (
        (AccessDenied, "forbidden"),
        (NotAllowed, "forbidden"),
        (InvalidTransition, "conflict"),
        (CommandRejected, "command-rejected"),
        (PlanInvalid, "plan-invalid"),
    ):
        if isinstance(exc, kind):
            return code
    return "conflict" if exc.status_code == 409 else "rejected"


def problems_install(api: NinjaAPI) -> None:
    """Answer every error of ``api`` as a problem."""

    def on_sf_problem(request: HttpRequest, exc: Exception) -> HttpResponse:
        found = problem_of(exc) or problem(500, "internal", type(exc).__name__)
        return HttpResponse(
            found.model_dump_json(exclude_none=True), status=found.status, content_type=PROBLEM_TYPE
        )

    def on_validation(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        errors = [
            {"loc": list(e.get("loc", [])), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors
        ]
        return problem_response(422, "validation", "the request has invalid fields", errors)

    def on_auth(request: HttpRequest, exc: Exception) -> HttpResponse:
        response = problem_response(401, "unauthenticated", "send Authorization: Bearer sf_…")
        response["WWW-Authenticate"] = "Bearer"
        return response

    def on_forbidden(request: HttpRequest, exc: Exception) -> HttpResponse:
        return problem_response(403, "forbidden", str(exc) or "forbidden")

    def on_http(request: HttpRequest, exc: HttpError) -> HttpResponse:
        code = HTTP_CODES.get(exc.status_code, "http")
        detail = str(exc)
        if detail.startswith("Cannot parse request body"):  # ninja's words for bad JSON
            detail = "the body is not valid JSON (send Content-Type: application/json)"
        return problem_response(exc.status_code, code, detail)

    def on_unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
        logger.error("API error on %s %s", request.method, request.path, exc_info=exc)
        return problem_response(500, "internal", f"{type(exc).__name__}; see the server log")

    def on_404(request: HttpRequest, exc: Exception) -> HttpResponse:
        return problem_response(404, "not-found", "no such object, or not visible to you")

    def on_denied(request: HttpRequest, exc: Exception) -> HttpResponse:
        return problem_response(403, "forbidden", str(exc) or "forbidden")

    handlers: list[tuple[type[Exception], Any]] = [
        (Exception, on_unexpected),
        (Http404, on_404),
        (PermissionDenied, on_denied),
        (ApiProblem, on_sf_problem),
        (SfError, on_sf_problem),
        (ValidationError, on_validation),
        (AuthenticationError, on_auth),
        (NinjaAuthorizationError, on_forbidden),
        (HttpError, on_http),
    ]
    for kind, handler in handlers:
        # ninja annotates the handler's exception as ``Exc | type[Exc]``; it passes the instance.
        api.add_exception_handler(kind, handler)
