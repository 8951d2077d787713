"""Unit execution (DESIGN §4): what runs next, one unit, and what follows it.

The modules import in one direction only (no import circles, not even inside
functions); each imports only modules on lines below its own:

    receivers, workers, replaying   signal receivers; the worker registry and its
                                    heartbeat (which sweeps); re-running a trace
    sweep                           recovery of crashed units and lost messages
    dispatch                        what runs next: to Celery by task name, or drain inline
    unit                            one unit: claim, worktree, prompt, agent loop
    outcome                         after a unit: checkpoint, charge, verify, retry
    review, decisions               review and the fail-closed merge; reviewed risk
                                    decisions and the task that waited on them
    hooks, prompts, worktrees, verification, stuck, values

Below the engine sits the plan/task domain (models, lifecycle, services, scheduler),
which never imports it: a change that may make work runnable sends
``sf_core.signals.session_runnable``, and ``receivers`` connects the engine to it in
``TasksAppConfig.ready``. The Celery interface (``tasks_app/tasks.py``) sits above.
"""
