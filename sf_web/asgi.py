"""ASGI entry point: HTTP through Django, websockets through Channels.

Websockets are wrapped origin check outermost, then session authentication, then
the URL router; each consumer still refuses anonymous users itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.asgi import get_asgi_application

from sf_core.env import env_file_load_checkout

env_file_load_checkout(Path(__file__).resolve().parent.parent)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sf_web.settings")

# Build Django's application first: it sets Django up before any consumer imports models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from sf_web.origins import OriginValidator  # noqa: E402
from sf_web.routing import websocket_urlpatterns  # noqa: E402
from tasks_app.schedules.inline import schedules_inline_start  # noqa: E402

# Embedded mode has no workers to sweep the schedules: this process does (team mode: no-op).
schedules_inline_start()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": OriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
