"""SF's Django project package: settings, ASGI/Celery entry points and the site shell."""

from sf_web.celery import app as celery_app

__all__ = ["celery_app"]
