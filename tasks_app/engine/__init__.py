"""Unit execution (DESIGN §4): what runs next, one unit, and what follows it.

The modules import in one direction only (no import circles, not even inside
functions); each imports only modules on lines below its own:

    receivers, workers, replaying   signal receivers; the worker registry and its
                                    heartbeat (which sweeps); re-running a trace
    drain                           the inline driver: units one after the other
    unit                            one unit: claim, worktree, prompt, agent loop
    attempts                        best-of-N: N attempts at once, ranked, one kept
    outcome                         after a unit: checkpoint, charge, verify, retry
    sweep                           recovery of crashed units and lost messages
    recovery, decisions, orphans    a person's retry/skip/cancel; reviewed risk
                                    decisions; tasks a fault left between two steps
    review, merge_queue             review and the fail-closed, verified merge
    attempt_choice                  best-of-N: the kept attempt, a person's pick
    dispatch                        what runs next: to Celery by task name, or the
                                    inline driver; ``dispatch_on_commit``
    extensions                      where the features above plug in
    hooks, prompts, worktrees, verification, stuck, values, model_calls

What comes next is a call: a module that may have made work runnable calls
``dispatch.dispatch_on_commit``. Below the engine sits the plan/task domain (models,
lifecycle, services, scheduler, workspaces), which never imports it: a change there
that may make work runnable sends ``sf_core.signals.session_runnable``, and
``receivers`` connects the engine to it in ``TasksAppConfig.ready``. Above it sit the
features (``tasks_app/features``), which plug into ``extensions`` and may call the
engine, and the surfaces; the Celery interface (``tasks_app/tasks.py``) is one of them.
"""
