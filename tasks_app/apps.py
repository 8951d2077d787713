from django.apps import AppConfig


class TasksAppConfig(AppConfig):
    name = "tasks_app"
    verbose_name = "Tasks"

    def ready(self) -> None:
        # Imported here, not at the top: the app registry must be ready before models
        # load (Django's rule for AppConfig modules).
        from sf_core.signals import doctor_heal_requested, session_report_requested
        from tasks_app.engine import extensions, receivers, workers  # noqa: F401  (heartbeats)
        from tasks_app.features import forge, line_comments
        from tasks_app.features.doctor import checks as doctor_checks
        from tasks_app.features.doctor.heal import doctor_heal
        from tasks_app.features.headless.query import session_report_snapshot
        from tasks_app.features.issues import poll as forge_issues
        from tasks_app.features.model_review.runner import attempt_review_run, model_review_run
        from tasks_app.features.model_review.sweep import model_reviews_recover
        from tasks_app.features.schedules import receivers as schedule_receivers
        from tasks_app.features.skills import proposals as skill_proposals
        from tasks_app.selectors import session_report_fields

        receivers.connect()
        # The features built on the engine, plugged into it (the engine imports none).
        extensions.checkpointed.register("line comments", line_comments.diff_comments_check)
        extensions.unit_ended.register("skill evidence", skill_proposals.skill_evidence_check)
        extensions.merged.register("skill proposals", skill_proposals.skill_proposal_merged)
        extensions.verified.register("model review", model_review_run)
        extensions.attempt_verdicts.register("model review", attempt_review_run)
        extensions.review_waiting.register("forge", forge.pull_request_offer)
        extensions.swept.register("forge_reviews", forge.forge_sync)
        extensions.swept.register("forge_issues", forge_issues.issues_sweep)
        extensions.swept.register("model_reviews", model_reviews_recover)
        doctor_checks.register_checks()  # the engine's runtime state, docs/doctor.md
        doctor_heal_requested.connect(
            doctor_heal, dispatch_uid="tasks_app.features.doctor.heal.doctor_heal"
        )
        schedule_receivers.connect()  # schedules run on the workers' sweep
        session_report_requested.connect(
            session_report_fields, dispatch_uid="tasks_app.selectors.session_report"
        )
        # What ``sf headless query`` answers, for /status and /session-report.
        session_report_requested.connect(
            session_report_snapshot, dispatch_uid="tasks_app.features.headless.query.session_report"
        )
