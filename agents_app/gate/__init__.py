"""The permission gate (DESIGN §5): every tool call an agent makes passes through it.

The pure decision, no database:

- ``policy.decide``: allow, ask or deny one call, in layers; it takes ``schemas`` values;
- ``judge_shell`` and ``judge_paths``: the verdicts on a command's parts and on the
  paths a call reads and writes; ``verdicts`` (the profile table, harness, built-in
  denies) and ``rules`` (allow, deny and approved rules, manual run control);
- ``paths``: where a path lands; ``normalize``: the stable input the audit record keeps;
- ``shell/``: what a shell command runs (tree-sitter-bash, wrappers seen through);
- ``catalog/``: the tools, and what each known command does, one module per family.

Around it, with the database: ``session`` (the gate of a running unit and its audit
rows), ``approvals`` with its ``views`` and ``cli`` (``manage.py sf gate``), and
``redaction`` (secrets out of everything stored, logged or sent).

Dependencies point one way: ``shell`` ← ``catalog`` ← the judges ← ``policy`` ←
``session``; nothing here imports the apps built on ``agents_app``.
"""
