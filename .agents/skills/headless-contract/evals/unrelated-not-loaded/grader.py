"""A negative case: a task that has nothing to do with headless (or the gate) must not
load those skills. Interface: docs/skill-evals.md."""

import json

from skills_app.grader_kit import Grader

g = Grader()
g.task_done()
for skill in ("headless-contract", "gate-rules", "engine-dispatch-points"):
    g.skill_not_loaded(skill)
expected = json.loads(g.hidden_text("answer.json"))["notes"]
g.check("NOTES.md written", g.file_text("NOTES.md").strip() == expected, g.file_text("NOTES.md"))
g.report()
