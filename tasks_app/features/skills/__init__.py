"""The skill lifecycle that runs units: evidence, drafts, proposals, evals, grading
(docs/skills.md). The skill catalogue itself is ``skills_app``, below."""
