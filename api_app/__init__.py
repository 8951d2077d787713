"""The HTTP API under ``/api/`` (django-ninja on the project's pydantic schemas): per-user
tokens, problem+json errors, idempotent creating calls; docs/api.md."""
