"""``GET /api/sessions/{id}/events``: the session's live events (``api_app/events.py``)."""

from __future__ import annotations

from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from ninja import Header, Router

from agents_app.models import AgentSession
from api_app.auth import api_token, visible_or_404
from api_app.events import StreamTimes, event_stream, in_database, sse_message
from api_app.problems import ERRORS, ApiProblem
from tasks_app.features.headless.cursor import MAX_TOKEN, ObserverState
from tasks_app.features.headless.watch import watch_begin, watch_step

router = Router(tags=["live events"])

STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
# Each message of the stream, as JSON Schema reads a server-sent event (OpenAPI 3.1:
# the media type's schema describes one event; its data is JSON of ``HeadlessEvent``).
SSE_MESSAGE = {
    "type": "object",
    "description": "One server-sent event: `data` is one event of the `HeadlessEvent` schema.",
    "properties": {
        "id": {"type": "string", "description": "resume after this event with Last-Event-ID"},
        "event": {"type": "string", "enum": ["message"]},
        "retry": {"type": "integer"},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": {"$ref": "#/components/schemas/HeadlessEvent"},
        },
    },
    "required": ["data"],
}
EVENTS_OPENAPI: dict[str, Any] = {
    "responses": {
        200: {
            "description": (
                "Server-sent events: each message's `data` is one event of the schema "
                "`HeadlessEvent` (the events of `sf headless --output-format "
                "stream-json`), and every event but `heartbeat` has an `id` to resume "
                "from with `Last-Event-ID`."
            ),
            "content": {"text/event-stream": {"schema": SSE_MESSAGE}},
        },
    }
}


def _session(request: HttpRequest, session_id: int) -> AgentSession:
    return visible_or_404(api_token(request), AgentSession.objects.all(), session_id, "project")


def resume_state(last_event_id: str, session_id: int) -> ObserverState:
    """The state a ``Last-Event-ID`` names; a 422 problem naming the header if bad."""
    try:
        state = ObserverState.from_token(last_event_id)
    except ValueError as exc:
        raise ApiProblem.invalid("header", "Last-Event-ID", str(exc)) from exc
    if state.session != session_id:
        raise ApiProblem.invalid(
            "header", "Last-Event-ID", f"an id of session {state.session}'s events"
        )
    return state


@router.get(
    "/sessions/{session_id}/events",
    response={204: None, **ERRORS},
    openapi_extra=EVENTS_OPENAPI,
    summary="The session's live events (server-sent events)",
)
async def session_events(
    request: HttpRequest,
    session_id: int,
    since: Literal["start", "now"] = "start",
    last_event_id: str | None = Header(
        None,
        alias="Last-Event-ID",
        max_length=MAX_TOKEN,
        pattern=r"^1\.[A-Za-z0-9_-]+$",
        description="the `id` of the last event received: the stream goes on after it",
    ),
) -> HttpResponse | StreamingHttpResponse:
    """A `session` event, then the session's events — its whole history with
    `since=start` (the default), or only what happens from now with `since=now` — and,
    once the session has finished, the `result` event, after which the stream ends.
    Reconnect with `Last-Event-ID` (EventSource does) to continue after the last event
    received; 204 when that was the finished session's `result`."""
    await sync_to_async(_session)(request, session_id)
    if last_event_id:
        state, head = resume_state(last_event_id, session_id), []
    else:
        opening, state = await in_database(
            watch_begin, session_id=session_id, from_start=since == "start"
        )
        head = [sse_message(opening, state.token())]
    if state.ended:  # the client has the end already: is there anything new?
        step = await in_database(watch_step, session_id=session_id, state=state)
        if step.finished and not step.events:
            return HttpResponse(status=204)
    stream = event_stream(
        session_id=session_id, state=state, head=head, times=StreamTimes.from_settings()
    )
    return StreamingHttpResponse(stream, content_type="text/event-stream", headers=STREAM_HEADERS)
