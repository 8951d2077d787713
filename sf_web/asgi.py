"""ASGI entry point: HTTP through Django, websockets through Channels, and the MCP
server's streamable HTTP endpoint at ``/mcp`` (``mcp_app.http``) beside Django.

Websockets are wrapped origin check outermost, then session authentication, then
the URL router; each consumer still refuses anonymous users itself. ``/mcp`` is
wrapped in the HTTP origin check (DNS-rebinding protection, as the MCP specification
asks), then its own bearer-token check. HTTP requests for a session's live events
share one thread for Django's synchronous work (``api_app.asgi``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.asgi import get_asgi_application

from sf_core.env import env_file_load_checkout

env_file_load_checkout(Path(__file__).resolve().parent.parent)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sf_web.settings")

# Build Django's application first: it sets Django up before any consumer imports models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from api_app.asgi import SharedThreadForStreams  # noqa: E402
from mcp_app.http import McpHttpApp  # noqa: E402
from sf_web.origins import HttpOriginValidator, OriginValidator  # noqa: E402
from sf_web.routing import websocket_urlpatterns  # noqa: E402
from tasks_app.features.schedules.inline import schedules_inline_start  # noqa: E402

# Embedded mode has no workers to sweep the schedules: this process does (team mode: no-op).
schedules_inline_start()

MCP_PATHS = frozenset({"/mcp", "/mcp/"})
mcp_asgi_app = HttpOriginValidator(McpHttpApp())
# A session's live events (long responses) share one thread for Django's own
# synchronous work instead of holding one each (api_app/asgi.py).
django_http_app = SharedThreadForStreams(django_asgi_app)


async def http_application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``/mcp`` to the MCP server, everything else to Django."""
    if scope["path"] in MCP_PATHS:
        await mcp_asgi_app(scope, receive, send)
    else:
        await django_http_app(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": http_application,
        "websocket": OriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
