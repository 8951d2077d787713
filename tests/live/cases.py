"""The live model's runs that are recorded once (tests/fixtures/record_live_traces.py)
and replayed in the fast layer (tests/test_live_replays.py): what the engine does with
whatever the model happened to do, without asking the model again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.live.unattended import BOUNDS


@dataclass(frozen=True)
class LiveCase:
    name: str
    files: dict[str, str]  # the repository's first commit
    plan: str  # the plan file headless runs (YAML), or "" to plan from the intent
    intent: str
    limits: dict[str, str]  # the unit bounds of the run (environment)
    why: str  # what the recording is for, and how its prompt differs from the product's
    policy: dict[str, Any] = field(default_factory=dict)  # the project's, when not the default
    # A person's follow-up (docs/follow-ups.md), sent to the running unit while its model
    # answers its first request (the recording script sends it as the web does).
    followup: str = ""


SKILL = """---
name: release-banner
description: Use when creating or changing banner.txt, the release banner of this project.
---
The release banner has a fixed house format. banner.txt holds exactly one line:

    *** SF release 7 ***

Three asterisks, a space, the words, a space, three asterisks. Nothing else in the file.
"""
# Qwen2.5-Coder-1.5B at temperature 0, offered the skill by its description alone, writes
# banner.txt without loading it (2026-11-28, the CI run of issue 29): whether a small
# model loads a skill unprompted is the model's business. The task here names the skill
# and the tool, so that the recorded run shows SF's side of a load. Told the name, and
# then the exact arguments, it still called load_skill with file="release-banner" too
# (the compact specs give the parameters without their descriptions); load_skill now
# takes a file that names the skill itself as the body, and the recording of
# 2026-11-28 15:03 loads it so.
SKILL_PLAN = """summary: The release banner
intent: We need the release banner file.
tasks:
  - key: banner
    title: Create banner.txt in the project's release banner format
    description: >-
      The house format of the release banner is written only in the project's skill
      release-banner. First read it: call load_skill with exactly the arguments
      {"name": "release-banner"} and nothing else. Then create banner.txt with the
      banner for release 7 in exactly that format.
    acceptance_criteria:
      - banner.txt holds the release banner in the house format
    verify:
      - grep -qx '\\*\\*\\* SF release 7 \\*\\*\\*' banner.txt
    risk_level: low
    max_retries: 0
"""
# Recording is not timed: on a busy machine one model step can take minutes, and a unit
# cut by its hard timeout mid-step records nothing of use. The steps bound the run.
RECORDING = {"SF_UNIT_HARD_TIMEOUT": "40m", "SF_UNIT_IDLE_TIMEOUT": "40m"}
# A harder intent's unit in eight steps: read the file and its test, write both, run the
# tests, finish, and two to spare. A model that has not done it in eight is lost; more
# steps only make a recording that takes hours a run on a busy machine longer.
HARDER = {**BOUNDS, "SF_UNIT_MAX_STEPS": "8", **RECORDING}

# Best-of-N (issue 32 item 5): two attempts at once, at the project's default variants
# (temperature 0 and 0.4), each verified, ranked and the best kept with its reason.
# Asked to add farewell() to the sample's greet.py (best_of_none, 2026-11-28), the model
# overwrote greet.py with write_file and then answered "```" until the loop gave up
# (no_progress), both attempts alike: a round with no attempt kept. best_of asks for a
# new file and names the tool that ends the unit, as the skill case names its tool.
BEST_OF_NONE_PLAN = """summary: Say goodbye too
intent: greet.py should say goodbye as well.
tasks:
  - key: farewell
    title: Add farewell(name) to greet.py
    description: >-
      Add a function farewell(name) to greet.py, next to greet, that returns
      "Goodbye, " followed by the name and "!". Change nothing else.
    acceptance_criteria:
      - farewell('Ada') returns 'Goodbye, Ada!'
    verify:
      - python3 -c "from greet import farewell; assert farewell('Ada') == 'Goodbye, Ada!'"
    risk_level: low
    max_retries: 0
    best_of: 2
"""
BEST_OF_PLAN = """summary: Say goodbye
intent: We need a farewell function.
tasks:
  - key: farewell
    title: Create farewell.py with farewell(name)
    description: >-
      Create the file farewell.py with one function, farewell(name), that returns
      "Goodbye, " followed by the name and "!": first call write_file to create
      it, then call finish with a one-line summary.
    acceptance_criteria:
      - farewell('Ada') returns 'Goodbye, Ada!'
    verify:
      - python3 -c "from farewell import farewell; assert farewell('Ada') == 'Goodbye, Ada!'"
    risk_level: low
    max_retries: 0
    best_of: 2
"""

# Repository instructions (issue 32 item 1): the house rule is written only in AGENTS.md,
# which SF puts in the unit's prompt; the task says there are instructions, not what they say.
HOUSE_RULES = """# House rules

Every Python file in this repository has this exact line as its first line:

# SPDX-License-Identifier: MIT
"""
INSTRUCTIONS_PLAN = """summary: Say goodbye, by the house rules
intent: We need a farewell function.
tasks:
  - key: farewell
    title: Create farewell.py with farewell(name)
    description: >-
      Create the file farewell.py with one function, farewell(name), that returns
      "Goodbye, " followed by the name and "!". Follow the repository's instructions
      for a new file. First call write_file to create it, then call finish with a
      one-line summary.
    acceptance_criteria:
      - farewell('Ada') returns 'Goodbye, Ada!'
      - farewell.py follows the repository's instructions
    verify:
      - python3 -m unittest -q test_farewell test_house_rules
    intent_claim:
      - farewell.py
    risk_level: low
    max_retries: 0
"""
# A unit's verify runs unattended: python3 -c is inline code, which the trusted profile
# asks a person about (plan lint refuses it), so the verify runs the test file.
FAREWELL_TEST = (
    "import unittest\n\nfrom farewell import farewell\n\n\n"
    "class FarewellTest(unittest.TestCase):\n"
    "    def test_farewell(self):\n"
    "        self.assertEqual(farewell('Ada'), 'Goodbye, Ada!')\n"
)
# The verify's check of the rule reads it from AGENTS.md: the unit's prompt shows the
# verify commands, and a command naming the line would tell the model the rule itself.
HOUSE_RULES_TEST = (
    "import unittest\nfrom pathlib import Path\n\n\n"
    "class HouseRulesTest(unittest.TestCase):\n"
    "    def test_first_line(self):\n"
    "        rule = Path('AGENTS.md').read_text().splitlines()[-1]\n"
    "        first = Path('farewell.py').read_text().splitlines()[0]\n"
    "        self.assertEqual(first, rule)\n"
)
# Follow-ups (issue 32 item 3): a person adds to the task while the unit runs.
FOLLOWUP = "Also add a second function, wave(name), to farewell.py that returns 'Bye, ' followed by the name."

CASES = {
    "skill": LiveCase(
        name="skill",
        files={"README.md": "# notes\n", ".agents/skills/release-banner/SKILL.md": SKILL},
        plan=SKILL_PLAN,
        intent="",
        # The load is the first step; the one line and finishing take two more.
        limits={**BOUNDS, "SF_UNIT_MAX_STEPS": "6", **RECORDING},
        why=(
            "the model loads a skill through load_skill and works from its body; the task "
            "names the skill and the tool (unnamed, this model at temperature 0 does not load it)"
        ),
    ),
    # Harder intents, planned by the model: what the engine does with whatever it does.
    "calc": LiveCase(
        name="calc",
        files={
            "calc.py": "def add(a, b):\n    return a + b\n",
            "test_calc.py": (
                "import unittest\n\nfrom calc import add\n\n\n"
                "class CalcTest(unittest.TestCase):\n"
                "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
            ),
        },
        plan="",
        intent="Add a function subtract(a, b) to calc.py that returns a minus b, with a unit test",
        limits=HARDER,
        why="a harder intent: the run ends cleanly whatever the model does with it",
    ),
    "greeter": LiveCase(
        name="greeter",
        files={},  # examples/sample-repo
        plan="",
        intent="Add a --shout flag to greet.py that prints the greeting in capitals",
        limits=HARDER,
        # Recorded at temperature 0.7: at 0 the model planned a verify command plan lint
        # refused, the plan waited for a person (exit 10) and no unit ran to replay.
        why="a harder intent: the run ends cleanly whatever the model does with it",
    ),
    "best_of": LiveCase(
        name="best_of",
        files={"README.md": "# notes\n"},
        plan=BEST_OF_PLAN,
        intent="",
        # Write the file, finish: two steps, and four to spare.
        limits={**BOUNDS, "SF_UNIT_MAX_STEPS": "6", **RECORDING},
        why="best-of-N: two attempts at once at different temperatures, ranked, one kept",
        # At temperature 0 this model answers "```" after its write (best_of_none): both
        # attempts sample, at 0.7 and 1.0 (the project's variants).
        policy={"best_of": {"variants": [{"temperature": 0.7}, {"temperature": 1.0}]}},
    ),
    "best_of_none": LiveCase(
        name="best_of_none",
        files={},  # examples/sample-repo
        plan=BEST_OF_NONE_PLAN,
        intent="",
        limits={**BOUNDS, "SF_UNIT_MAX_STEPS": "6", **RECORDING},
        why="best-of-N: two attempts at once, neither finishing: the round keeps none, and says so",
    ),
    # best_of's task with a test file to run: the model ran the verify's python3 -c,
    # which the trusted profile asks about, and a run asks nobody.
    "best_of_tested": LiveCase(
        name="best_of_tested",
        files={
            "README.md": "# notes\n",
            "test_farewell.py": (
                "import unittest\n\nfrom farewell import farewell\n\n\n"
                "class FarewellTest(unittest.TestCase):\n"
                "    def test_farewell(self):\n"
                "        self.assertEqual(farewell('Ada'), 'Goodbye, Ada!')\n"
            ),
        },
        plan=BEST_OF_PLAN.replace(
            """python3 -c "from farewell import farewell; assert farewell('Ada') == 'Goodbye, Ada!'\"""",
            "python3 -m unittest -q test_farewell",
        ),
        intent="",
        limits={**BOUNDS, "SF_UNIT_MAX_STEPS": "6", **RECORDING},
        why="best-of-N: two attempts at once at different temperatures, ranked, one kept",
        policy={"best_of": {"variants": [{"temperature": 0.7}, {"temperature": 1.0}]}},
    ),
    "instructions": LiveCase(
        name="instructions",
        files={
            "README.md": "# notes\n",
            "AGENTS.md": HOUSE_RULES,
            "test_farewell.py": FAREWELL_TEST,
            "test_house_rules.py": HOUSE_RULES_TEST,
        },
        plan=INSTRUCTIONS_PLAN,
        intent="",
        limits={**BOUNDS, "SF_UNIT_MAX_STEPS": "6", **RECORDING},
        why=(
            "repository instructions: a rule written only in AGENTS.md reaches the unit's "
            "prompt, and the verify checks the model followed it"
        ),
    ),
    "followup": LiveCase(
        name="followup",
        files={"README.md": "# notes\n", "test_farewell.py": FAREWELL_TEST},
        plan=BEST_OF_PLAN.replace("    best_of: 2\n", "").replace(
            """python3 -c "from farewell import farewell; assert farewell('Ada') == 'Goodbye, Ada!'\"""",
            "python3 -m unittest -q test_farewell",
        ),
        intent="",
        limits={**BOUNDS, "SF_UNIT_MAX_STEPS": "6", **RECORDING},
        why=(
            "follow-ups: a person's message, sent while the model answers its first "
            "request, reaches the running unit's next model step as the person's"
        ),
        followup=FOLLOWUP,
    ),
}
