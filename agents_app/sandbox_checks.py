"""The start-up check of the OS sandbox (``agents_app.runtime.sandbox``).

| id      | what                                                                       |
| ------- | -------------------------------------------------------------------------- |
| sf.W010 | no unprivileged sandbox here (bubblewrap missing, no user namespaces, no   |
|         | seccomp): every profile above restricted is refused                        |
| sf.W011 | SF_SANDBOX=off: the operator runs agent and verify commands without the sandbox |
| sf.W013 | SF runs as root and cannot make pids cgroups: the processes limit does not hold |
| sf.W014 | no memory cgroup SF may make: memory is limited per process only (RLIMIT_AS) |
| sf.W015 | SF runs as root and bwrap cannot run as the unprivileged SF_SANDBOX_USER:   |
|         | a command is root to the kernel's file permission checks                   |

Warnings, not errors: without the sandbox SF still runs read-only (``restricted``) sessions.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Tags, Warning, register

from agents_app.runtime.sandbox import sandbox_state
from agents_app.runtime.sandbox_limits import memory_cgroup_root, pids_cgroup_root
from agents_app.runtime.sandbox_user import host_user_problem


@register(Tags.security)
def check_sandbox(app_configs: Sequence[AppConfig] | None, **_: Any) -> list[CheckMessage]:
    state = sandbox_state()
    if state.mode == "unavailable":
        return [
            Warning(
                f"The OS sandbox is unavailable: {state.detail}. Its guarantees (an "
                "unprivileged user without capabilities, the seccomp filter, the file "
                "allowlist, resource limits) cannot hold: commands run without it, and "
                "every profile above restricted is refused.",
                hint="Install bubblewrap and libseccomp2 (scripts/setup.sh does) and allow "
                "unprivileged user namespaces (sysctl user.max_user_namespaces > 0, "
                "kernel.unprivileged_userns_clone=1 where it exists), or set "
                "SF_SANDBOX=off to allow every profile without the sandbox.",
                id="sf.W010",
            )
        ]
    if state.mode == "off":
        return [
            Warning(
                "SF_SANDBOX=off: agent and verify commands run without the OS sandbox "
                "(the permission gate is the only wall).",
                hint="Unset SF_SANDBOX to run them in bubblewrap.",
                id="sf.W011",
            )
        ]
    found: list[CheckMessage] = []
    if memory_cgroup_root() is None:
        found.append(
            Warning(
                "SF cannot create memory cgroups here (no writable memory controller for "
                "its own cgroup: cgroup v1's /sys/fs/cgroup/memory, or a delegated cgroup "
                "v2 subtree): memory is limited per process only (RLIMIT_AS, the policy's "
                "sandbox.memory_mb), so several processes of one command together can "
                "use more.",
                hint="Run SF as root on cgroup v1, or in a cgroup v2 subtree delegated to "
                "it (systemd: Delegate=yes) with SF's processes in a leaf cgroup.",
                id="sf.W014",
            )
        )
    found += _host_user_check()
    if os.geteuid() == 0 and pids_cgroup_root() is None:
        found.append(
            Warning(
                "SF runs as root and cannot create pids cgroups (no writable pids "
                "controller under /sys/fs/cgroup): the kernel does not apply the "
                "processes limit (RLIMIT_NPROC) to root's commands, so a fork bomb in a "
                "command is bounded only by its timeout.",
                hint="Run SF as an ordinary user, or give it a writable pids cgroup "
                "(cgroup v1 /sys/fs/cgroup/pids, or v2 with the pids controller).",
                id="sf.W013",
            )
        )
    return found


def _host_user_check() -> list[CheckMessage]:
    problem = host_user_problem()
    if not problem:
        return []
    return [
        Warning(
            f"SF runs as root and the sandbox cannot run as an unprivileged user: "
            f"{problem}. Commands run as root's uid on the host: they may change "
            "root-owned files bound into the sandbox, the host's device nodes in /dev "
            "(chmod 0 /dev/null) among them.",
            hint="Run scripts/setup.sh as root (it creates the system user sf-sandbox), "
            "or name another unprivileged user in SF_SANDBOX_USER.",
            id="sf.W015",
        )
    ]
