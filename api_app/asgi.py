"""The ASGI side of the live events: their requests share one thread for Django's own
synchronous work.

Django's ASGI handler opens a thread-sensitive context per request, and with it a
thread of that request's own for the synchronous parts (middleware, signals, the token
check), kept until the response ends. For a stream that lasts minutes that would be an
idle thread per client. asgiref lets an outer context supply the executor: Django's
inner context then uses it, so every live-event request shares one thread for those
short calls. The stream's own looks at the database run on the loop's shared executor
(``api_app.events``), not on this thread.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext

EVENTS_PATH = re.compile(r"^/api/sessions/[^/]+/events/?$")


class SharedThreadForStreams:
    """Wrap Django's ASGI app: requests for a session's events share one thread."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sf-streams")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and EVENTS_PATH.match(scope.get("path", "")):
            async with ThreadSensitiveContext(executor=self.executor):
                await self.app(scope, receive, send)
        else:
            await self.app(scope, receive, send)
