"""Unit execution (DESIGN §4): what runs next, one unit, and what follows it.

The modules depend on each other in one direction only (no import circles, not even
inside functions); each line may import the ones below it:

    dispatch, sweep   which units run next (Celery by task name, or inline) and recovery
    unit              one unit: claim, worktree, prompt, agent loop
    outcome           after a unit: checkpoint, charge, verification, retry, review
    review            review and the fail-closed merge
    decisions         a reviewed risk decision and the task that waited on it
    hooks, prompts, worktrees, verification, stuck, workers, values

The plan/task domain below them (models, lifecycle, services, scheduler) never
imports the engine: a state change that may make work runnable sends
``sf_web.signals.session_runnable``, and ``receivers`` connects the engine to it.
"""
