"""Pure scheduling: cycles, waves, dependency conditions, readiness, claim overlaps."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tasks_app.scheduler import (
    Edge,
    blockers_of,
    claims_overlap,
    compute_waves,
    condition_met,
    edges_by,
    find_cycle,
    ready_keys,
)


def test_it_finds_no_cycle_in_a_dag() -> None:
    assert (
        find_cycle("abcd", [Edge("b", "a"), Edge("c", "a"), Edge("d", "b"), Edge("d", "c")]) is None
    )


def test_it_names_the_cycle() -> None:
    cycle = find_cycle("abcd", [Edge("a", "b"), Edge("b", "c"), Edge("c", "a"), Edge("d", "a")])
    assert cycle is not None
    assert cycle[0] == cycle[-1]
    assert set(cycle) == {"a", "b", "c"}


def test_a_self_loop_is_a_cycle() -> None:
    assert find_cycle("a", [Edge("a", "a")]) == ["a", "a"]


def test_a_long_chain_does_not_overflow_the_stack() -> None:
    keys = [f"t{i}" for i in range(5000)]
    edges = [Edge(keys[i], keys[i - 1]) for i in range(1, 5000)]
    assert find_cycle(keys, edges) is None
    assert len(compute_waves(keys, edges)) == 5000


def test_waves_group_what_can_run_in_parallel() -> None:
    edges = [
        Edge("b", "a"),
        Edge("c", "a"),
        Edge("d", "b"),
        Edge("d", "c"),
        Edge("e", "a", "failure"),
    ]
    assert compute_waves(list("abcde"), edges) == [["a"], ["b", "c", "e"], ["d"]]


def test_independent_tasks_form_one_wave() -> None:
    assert compute_waves(["x", "y", "z"], []) == [["x", "y", "z"]]


@given(st.integers(min_value=1, max_value=60), st.integers(min_value=0, max_value=2**32))
def test_waves_respect_every_dependency(size: int, seed: int) -> None:
    rng = random.Random(seed)
    keys = [f"k{i}" for i in range(size)]
    edges = [Edge(keys[i], keys[j]) for i in range(size) for j in range(i) if rng.random() < 0.1]
    waves = compute_waves(keys, edges)
    wave_of = {key: n for n, wave in enumerate(waves) for key in wave}
    assert sorted(wave_of) == sorted(keys)
    for edge in edges:
        assert wave_of[edge.task] > wave_of[edge.on]
    for key in keys:  # as early as possible: some dependency sits in the previous wave
        deps = [wave_of[e.on] for e in edges if e.task == key]
        assert wave_of[key] == (max(deps) + 1 if deps else 0)


@pytest.mark.parametrize(
    ("condition", "status", "met"),
    [
        ("success", "done", True),
        ("success", "failed", False),
        ("success", "in_progress", False),
        ("failure", "failed", True),
        ("failure", "done", False),
        ("failure", "todo", False),
        ("always", "done", True),
        ("always", "failed", True),
        ("always", "cancelled", True),
        ("always", "review", False),
    ],
)
def test_dependency_conditions(condition: str, status: str, met: bool) -> None:
    assert condition_met(condition, status) is met


def test_blockers_say_whether_they_can_still_clear() -> None:
    edges = edges_by([Edge("c", "a"), Edge("c", "b", "failure")])
    found = blockers_of("c", edges, {"a": "failed", "b": "in_progress", "c": "todo"})
    assert [(b.on, b.satisfiable) for b in found] == [("a", False), ("b", True)]
    assert found[0].describe() == "a failed; this task needs it done"
    assert found[1].describe("build-api") == "build-api to be failed (now in_progress)"


def test_ready_means_todo_without_blockers() -> None:
    edges = [Edge("b", "a"), Edge("c", "a", "failure"), Edge("d", "a", "always")]
    statuses = {"a": "done", "b": "todo", "c": "todo", "d": "todo", "e": "review"}
    assert ready_keys(list("abcde"), edges, statuses) == ["b", "d"]


def test_overlapping_intent_claims_are_paired() -> None:
    claims = {"a": ["src/x.py", "./src/y.py"], "b": ["src/y.py"], "c": ["docs/z.md", ".env"]}
    assert claims_overlap(claims) == [("a", "b", ["src/y.py"])]
    assert claims_overlap({"a": [".env"], "b": [".env"]}) == [("a", "b", [".env"])]
