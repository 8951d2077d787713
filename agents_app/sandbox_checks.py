"""The start-up check of the OS sandbox (``agents_app.runtime.sandbox``).

| id      | what                                                                       |
| ------- | -------------------------------------------------------------------------- |
| sf.W010 | no unprivileged sandbox here (bubblewrap missing, no user namespaces, no   |
|         | seccomp): every profile above restricted is refused                        |
| sf.W011 | SF_SANDBOX=off: the operator runs agent and verify commands without the sandbox |
| sf.W013 | SF runs as root and cannot make pids cgroups: the processes limit does not hold |
| sf.W014 | no memory cgroup SF may make: memory is limited per process only (RLIMIT_AS) |

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
