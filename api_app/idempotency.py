"""``Idempotency-Key`` on the creating calls (project, session, intent, command).

The first call with a key runs, and its answer is stored with the key, the person, the
route and a hash of the body — in the same transaction as what it created, so either
both are written or neither. A repeat by the same person with the same key and body
gets the stored answer and creates nothing; another body (or route) under the key is
a 409 problem. A call that fails stores nothing: the client may fix it and retry.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from ninja import Header
from pydantic import BaseModel

from api_app.auth import api_token
from api_app.models import IdempotencyRecord
from api_app.problems import ApiProblem

HEADER = "Idempotency-Key"
MAX_KEY = 200


def request_hash(route: str, body: Any) -> str:
    text = json.dumps([route, body], sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _json(status: int, body: Any, replayed: bool = False) -> HttpResponse:
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    if replayed:
        response["Idempotent-Replayed"] = "true"
    return response


# The header as a parameter of the creating calls, so the document names it.
KEY_PARAM = Header(
    None,
    alias=HEADER,
    max_length=MAX_KEY,
    description="a key of your choice: a repeat with the same body returns the first answer",
)


def idempotent(
    request: HttpRequest,
    key: str | None,
    body: BaseModel | dict[str, Any],
    create: Callable[[], BaseModel],
    status: int = 201,
) -> HttpResponse:
    """Run ``create`` once per ``key`` (the Idempotency-Key header); answer with its
    output as JSON at ``status``."""
    key = (key or "").strip()
    if not key:
        return _json(status, create().model_dump(mode="json"))
    user = api_token(request).user
    route = f"{request.method} {request.path}"
    payload = body.model_dump(mode="json") if isinstance(body, BaseModel) else body
    digest = request_hash(route, payload)
    previous = IdempotencyRecord.objects.filter(user=user, key=key).first()
    if previous is not None:
        return _replay(previous, digest)
    try:
        with transaction.atomic():
            payload = create().model_dump(mode="json")
            IdempotencyRecord.objects.create(
                user=user,
                key=key,
                route=route,
                request_hash=digest,
                status_code=status,
                response=payload,
            )
    except IntegrityError:  # a concurrent call with the key won; ours rolled back
        return _replay(IdempotencyRecord.objects.get(user=user, key=key), digest)
    return _json(status, payload)


def _replay(record: IdempotencyRecord, digest: str) -> HttpResponse:
    if record.request_hash != digest:
        raise ApiProblem(
            409,
            "idempotency-conflict",
            f"{HEADER} {record.key!r} was used for another request ({record.route})",
        )
    return _json(record.status_code, record.response, replayed=True)
