"""One hierarchy for business errors; views map them to 4xx responses or htmx fragments."""

from __future__ import annotations


class SfError(Exception):
    """A business rule refused an operation. The message is one line, for people."""

    status_code = 400


class NotAllowed(SfError):
    """The actor may not do this."""

    status_code = 403


class InvalidTransition(SfError):
    """A state change that the state machine does not allow."""

    status_code = 409


class CommandRejected(SfError):
    """A slash command that did not parse or cannot be applied."""


class PolicyInvalid(SfError):
    """A project policy document that does not match its schema."""


class PlanInvalid(SfError):
    """A plan that does not match the plan schema, or whose dependencies form a cycle."""


class PolicyDenied(SfError):
    """The permission gate denied a tool call."""

    status_code = 403
