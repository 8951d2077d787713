"""A model's review before a person's (docs/model-review.md): after a unit's work
passes verification, the deep model reviews its diff against the task's criteria with
read-only tools, and leaves line comments and a verdict; the project's policy makes the
verdict advisory or required. Plugged into the engine at ``extensions.verified``
(``runner.model_review_run``).

Read the verdict on a unit with ``verdicts.model_review_verdict(unit)`` (re-exported
here): "approve", "request_changes", "no_verdict", or None when not reviewed.
"""

from tasks_app.features.model_review.verdicts import model_review_verdict

__all__ = ["model_review_verdict"]
