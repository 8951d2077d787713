"""The API object: django-ninja on the project's pydantic models.

django-ninja was chosen because SF's schemas are already pydantic (ninja's ``Schema``
is a pydantic model), it writes the OpenAPI 3 document from the type hints, runs on
plain Django views (the project's middleware, settings and test client apply) and
supports Django 5.2. Every route needs a bearer token (``TokenAuth``).
"""

from __future__ import annotations

import json
from typing import Any

from ninja import NinjaAPI
from ninja.openapi.schema import OpenAPISchema

from api_app.auth import TokenAuth
from api_app.problems import PROBLEM_TYPE, problems_install
from api_app.routes.events import router as events_router
from api_app.routes.reads import router as reads_router
from api_app.routes.schedules import router as schedules_router
from api_app.routes.sessions import router as sessions_router
from api_app.routes.work import router as work_router
from tasks_app.features.headless.events import EVENT_ADAPTER


class SfApi(NinjaAPI):
    """ninja's document, completed with what its type hints cannot say: errors are
    ``application/problem+json`` (ninja would write its renderer's JSON type), every
    secured operation may answer 401, and the live events' schema is a component."""

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> OpenAPISchema:
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        problem = {PROBLEM_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
        for path_item in schema["paths"].values():
            for operation in path_item.values():
                responses = operation["responses"]
                if operation.get("security"):
                    responses.setdefault(401, {"description": "Unauthorized"})
                for status, response in responses.items():
                    if int(status) >= 400:
                        response["content"] = problem
        schema["components"]["schemas"].update(_event_components())
        return schema


def _event_components() -> dict[str, Any]:
    """The events of headless's stream-json (``HeadlessEvent``, one of them by
    ``type``) and the models they use, as OpenAPI components."""
    events = EVENT_ADAPTER.json_schema(ref_template="#/components/schemas/{model}")
    components: dict[str, Any] = dict(events.pop("$defs"))
    components["HeadlessEvent"] = events
    return components


api = SfApi(
    title="SF API",
    version="1",
    description=(
        "Intent → plan → tasks → verified merges. Authenticate with "
        "`Authorization: Bearer sf_…` (tokens are made on /profile/tokens/). Errors are "
        "RFC 9457 problem+json with a stable `code`. Creating calls accept an "
        "`Idempotency-Key` header. Lists take `limit` (at most 100) and `offset`."
    ),
    auth=TokenAuth(),
    urls_namespace="api",
    docs_url="/docs",
    openapi_url="/openapi.json",
)
problems_install(api)
api.add_router("", sessions_router)
api.add_router("", work_router)
api.add_router("", schedules_router)
api.add_router("", reads_router)
api.add_router("", events_router)


def openapi_document() -> dict[str, Any]:
    return dict(api.get_openapi_schema(path_prefix="/api"))


def openapi_text() -> str:
    """The committed form of the document (docs/openapi.json): sorted, indented."""
    return json.dumps(openapi_document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
