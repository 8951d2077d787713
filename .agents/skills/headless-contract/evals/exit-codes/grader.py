"""Grader: the task is done, the skill was loaded, answer.md names every expected item
(hidden/answer.json "must_name"). Interface: docs/skill-evals.md."""

import json

from skills_app.grader_kit import Grader

SKILL = "headless-contract"

g = Grader()
g.task_done()
g.skill_loaded(SKILL)
expected = json.loads(g.hidden_text("answer.json"))["must_name"]
g.mentions_all("answer.md names every expected item", g.file_text("answer.md"), expected)
g.report()
