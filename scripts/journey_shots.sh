#!/usr/bin/env bash
# The screenshots of docs/journey.md: the browser tests that walk the journey take them
# where they stand (tests/browser/conftest.py doc_shot) into docs/images/journey/.
# Run from a checkout set up with `scripts/setup.sh --with-test-tools`; takes minutes.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
set -a; . .sf/env; set +a
export SF_CELERY_QUEUE=$SF_CELERY_QUEUE-test SF_CHANNELS_PREFIX=$SF_CHANNELS_PREFIX-test
export SF_DOC_SHOTS="$ROOT/docs/images/journey"
.venv/bin/python -m pytest -q -m browser \
  "tests/browser/test_intent_journey.py::test_intent_to_merged_change[1280]" \
  tests/browser/test_planning_wait.py \
  "tests/browser/test_plan_acceptance.py::test_a_proposed_plan_shows_its_lint_is_edited_then_rejected_with_a_reason" \
  tests/browser/test_waiting_signs.py \
  "tests/browser/test_unit_live.py::test_a_failing_unit_shows_its_tokens_verification_and_reason_live" \
  tests/browser/test_task_stop.py \
  tests/browser/test_unit_line_comments.py "$@"
ls -l "$SF_DOC_SHOTS"
