"""Recurring schedules (docs/schedules.md): a saved intent or plan template run at the
times of a cron expression in a time zone, by the workers' sweep.

``timing`` (pure: cron, zones, DST, the missed-run policy), ``spec`` (the input every
surface validates the same way), ``services`` (create, edit, pause, resume, delete,
run now), ``runner`` (the sweep: claim due occurrences, start runs, follow planning),
``selectors`` (what pages and the API show), ``inline`` (embedded mode's thread),
``views``/``forms``/``cli`` (interfaces). Models: ``tasks_app.models.schedules``.
"""
