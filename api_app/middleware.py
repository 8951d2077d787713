"""Every error under ``/api/`` is a problem, including the two ninja never sees:
Django's 404 for a path no route matches, and ninja's plain-text 405 for a method a
route does not take."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase

from api_app.problems import PROBLEM_TYPE, problem_response

PREFIX = "/api/"
Handler = Callable[[HttpRequest], HttpResponseBase | Awaitable[HttpResponseBase]]


class ApiProblemsMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if self.is_async:
            return self._acall(request)
        response = self.get_response(request)
        assert isinstance(response, HttpResponseBase)
        return as_problem(request, response)

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        assert not isinstance(response, HttpResponseBase)
        return as_problem(request, await response)


def as_problem(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    """``response`` itself, unless it is an API 404 or 405 that is not a problem yet."""
    if not request.path.startswith(PREFIX) or response.status_code not in (404, 405):
        return response
    if response.get("Content-Type", "").startswith(PROBLEM_TYPE):
        return response
    where = f"{request.method} {request.path}"
    if response.status_code == 404:
        return problem_response(404, "not-found", f"no API call {where}; see /api/docs")
    allowed = response.get("Allow", "")
    problem = problem_response(
        405, "method-not-allowed", f"{where} is not a call; {request.path} takes {allowed}"
    )
    problem["Allow"] = allowed
    return problem
