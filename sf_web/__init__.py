"""SF's Django project package: the wiring of the apps (settings, ASGI, URLs, Celery, checks)."""

from sf_web.celery import app as celery_app

__all__ = ["celery_app"]
