"""The OS sandbox of agent commands, with the real bubblewrap and real processes."""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

import pytest
from django.core.checks import Tags, run_checks

from agents_app.runtime.sandbox import (
    CommandRun,
    SandboxPolicy,
    SandboxRefused,
    bwrap_problem,
    policy_for,
    profile_problem,
    sandbox_state,
    sandboxed_run,
)
from agents_app.runtime.tools import TOOLS, ToolContext, ToolError
from conftest import make_git_repo

NO_NETWORK = SandboxPolicy(network=False, profile="normal")
REDIS = ("127.0.0.1", 6379)  # listening on every machine SF's tests run on

pytestmark = pytest.mark.skipif(
    bool(bwrap_problem("/usr/bin/bwrap")), reason="bubblewrap is required (scripts/setup.sh)"
)


def run(
    worktree: Path, command: str, policy: SandboxPolicy = NO_NETWORK, timeout: float = 30
) -> CommandRun:
    return sandboxed_run(command, worktree=worktree, policy=policy, env=_env(), timeout=timeout)


def _env() -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def alive(marker: str) -> bool:
    return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0


def gone(marker: str, timeout: float = 10) -> bool:
    """Whether no process carries ``marker`` within ``timeout`` (a killed process may
    take a moment to be reaped on a busy machine; one that lives on never goes)."""
    deadline = time.monotonic() + timeout
    while alive(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    path = tmp_path / "wt"
    path.mkdir()
    return path


def test_the_sandbox_is_on_by_default() -> None:
    assert sandbox_state().mode == "bwrap"


def test_a_write_outside_the_worktree_fails_and_leaves_nothing(
    worktree: Path, tmp_path: Path
) -> None:
    assert sandbox_state().sandboxed  # never try the write to /usr without it
    outside = tmp_path / "outside"
    outside.mkdir()
    done = run(
        worktree, f"echo owned > {outside}/owned.txt; touch /usr/sf-sandbox-probe; echo ok > in.txt"
    )
    assert done.sandboxed
    assert not (outside / "owned.txt").exists()
    assert not Path("/usr/sf-sandbox-probe").exists()
    assert "Read-only file system" in done.output
    assert (worktree / "in.txt").read_text() == "ok\n"  # the worktree is writable


def test_home_is_empty_and_its_secrets_unreadable(
    worktree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_rsa"
    key.write_text("FAKE-PRIVATE-KEY\n")
    monkeypatch.setenv("HOME", str(home))
    done = run(worktree, f'cat ~/.ssh/id_rsa; cat {key}; echo "home=$HOME"; ls -A ~ | wc -l')
    assert "FAKE-PRIVATE-KEY" not in done.output
    assert "No such file or directory" in done.output
    assert f"home={home}" in done.output
    assert done.output.rstrip().endswith("0")  # an empty home


def test_sfs_own_checkout_is_hidden(worktree: Path, settings) -> None:
    env_file = Path(settings.BASE_DIR) / "manage.py"
    assert env_file.exists()
    done = run(worktree, f"cat {env_file} >/dev/null && echo READABLE || echo hidden")
    assert done.output.strip().endswith("hidden")


def _connect(host: str, port: int) -> str:
    return f"(exec 3<>/dev/tcp/{host}/{port}) 2>/dev/null && echo CONNECTED || echo REFUSED"


def test_no_network_without_a_grant(worktree: Path) -> None:
    assert run(worktree, _connect(*REDIS)).output.strip() == "REFUSED"
    # TEST-NET-1: in a namespace without interfaces no packet leaves the host.
    assert run(worktree, _connect("192.0.2.1", 80), timeout=10).output.strip() == "REFUSED"
    assert run(worktree, "ls -A /run 2>/dev/null | wc -l").output.strip() == "0"  # no sockets


def test_the_grant_comes_from_egress_or_the_unrestricted_profile() -> None:
    assert not policy_for("trusted", []).network
    assert policy_for("normal", ["pypi.org"]).egress == ("pypi.org",)
    assert policy_for("unrestricted", []).egress == ("*",)  # through the proxy too


@pytest.mark.parametrize("mode", ["bwrap", "off"])
def test_a_background_process_dies_with_the_command(worktree: Path, settings, mode: str) -> None:
    settings.SF_SANDBOX = mode
    marker = f"sf-sandbox-bg-{uuid.uuid4().hex}"
    done = run(worktree, f'sh -c "sleep 300; true {marker}" & sleep 0.2; echo started')
    assert done.exit_code == 0
    assert "started" in done.output
    assert done.sandboxed == (mode == "bwrap")
    assert gone(marker)


@pytest.mark.parametrize("mode", ["bwrap", "off"])
def test_a_command_over_its_timeout_is_killed_with_its_group(
    worktree: Path, settings, mode: str
) -> None:
    settings.SF_SANDBOX = mode
    marker = f"sf-sandbox-timeout-{uuid.uuid4().hex}"
    started = time.monotonic()
    done = run(worktree, f'sh -c "sleep 300; true {marker}" & sleep 300', timeout=1)
    assert done.exit_code is None
    assert time.monotonic() - started < 10
    assert gone(marker)


def test_git_add_and_commit_work_in_a_worktree(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    wt = tmp_path / "worktrees" / "p1-k-1"
    branch = "sf/p1/k/1"
    subprocess.run(["git", "worktree", "add", "-q", "-b", branch, str(wt)], cwd=repo, check=True)
    done = run(
        wt,
        "echo hi > new.txt && git status --short && git add new.txt && "
        "git commit -qm 'in the sandbox' && git diff HEAD~1 --stat && echo COMMITTED",
    )
    assert done.exit_code == 0, done.output
    assert "?? new.txt" in done.output
    assert "COMMITTED" in done.output
    log = subprocess.run(
        ["git", "log", "--format=%s", "-1", branch], cwd=repo, capture_output=True, text=True
    )
    assert log.stdout.strip() == "in the sandbox"


def test_git_hooks_config_and_other_branches_stay_read_only(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    wt = tmp_path / "wt"
    subprocess.run(
        ["git", "worktree", "add", "-q", "-b", "sf/p1/k/1", str(wt)], cwd=repo, check=True
    )
    main_before = (repo / ".git/refs/heads/main").read_text()
    hook = repo / ".git/hooks/post-commit"
    done = run(
        wt,
        f"echo 'touch /tmp/pwned' > {hook}; git config core.fsmonitor 'touch /tmp/pwned'; "
        "git commit -q --allow-empty -m x && git update-ref refs/heads/main HEAD",
    )
    assert done.exit_code != 0
    assert not hook.exists()
    assert "fsmonitor" not in (repo / ".git/config").read_text()
    assert (repo / ".git/refs/heads/main").read_text() == main_before


def test_a_link_in_a_git_directory_to_be_bound_refuses_the_command(tmp_path: Path) -> None:
    # HEAD is read-only in the sandbox; one that names a branch under a planted link
    # all the same (moved before, by whatever means) is refused, not bound.
    repo = make_git_repo(tmp_path / "repo")
    wt = tmp_path / "wt"
    subprocess.run(
        ["git", "worktree", "add", "-q", "-b", "sf/p1/k/1", str(wt)], cwd=repo, check=True
    )
    (repo / ".git/refs/heads/sf/p1/k/evil").symlink_to(tmp_path)
    (repo / ".git/worktrees/wt/HEAD").write_text("ref: refs/heads/sf/p1/k/evil/x\n")
    with pytest.raises(SandboxRefused, match="k/evil is not a plain directory"):
        run(wt, "true")


def test_run_command_runs_in_the_sandbox(worktree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    spec = TOOLS["run_command"]
    ctx = ToolContext(worktree=worktree)  # no policy given: no network
    output = spec.run(ctx, spec.parse({"command": f"touch {outside}; {_connect(*REDIS)}"}))
    assert output.startswith("exit code 0")
    assert output.rstrip().endswith("REFUSED")
    assert not outside.exists()
    granted = ToolContext(worktree=worktree, sandbox=lambda: policy_for("normal", ["pypi.org"]))
    output = spec.run(granted, spec.parse({"command": f"echo $HTTPS_PROXY; {_connect(*REDIS)}"}))
    assert output.split("\n")[1:3] == ["http://127.0.0.1:3128", "REFUSED"]  # the proxy only


# --- without the sandbox ----------------------------------------------------------------


def test_the_system_check_reports_a_missing_bwrap(settings, tmp_path: Path) -> None:
    assert not [m for m in run_checks(tags=[Tags.security]) if m.id in ("sf.W010", "sf.W011")]
    settings.SF_SANDBOX_BWRAP = str(tmp_path / "no-bwrap")
    [message] = [m for m in run_checks(tags=[Tags.security]) if m.id == "sf.W010"]
    assert "no-bwrap" in message.msg
    settings.SF_SANDBOX = "off"
    assert [m.id for m in run_checks(tags=[Tags.security]) if m.id in ("sf.W010", "sf.W011")] == [
        "sf.W011"
    ]


def test_the_system_check_reports_a_bwrap_without_user_namespaces(settings, tmp_path: Path) -> None:
    # What bubblewrap says where unprivileged user namespaces are off. (As root it runs
    # as the sandbox's user, who may search no directory of tmp_path's but its own.)
    tmp_path.chmod(0o755)
    fake = tmp_path / "bwrap-no-userns"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    settings.SF_SANDBOX_BWRAP = str(fake)
    [message] = [m for m in run_checks(tags=[Tags.security]) if m.id == "sf.W010"]
    assert "cannot create an unprivileged sandbox" in message.msg
    assert "No permissions to create new namespace" in message.msg
    assert "every profile above restricted is refused" in message.msg
    assert "normal profile needs the OS sandbox" in profile_problem("normal")
    assert profile_problem("restricted") == ""


def test_the_system_check_reports_root_without_pids_cgroups(monkeypatch) -> None:
    import agents_app.sandbox_checks as checks

    assert "sf.W013" not in [m.id for m in run_checks(tags=[Tags.security])]
    monkeypatch.setattr(checks.os, "geteuid", lambda: 0)
    monkeypatch.setattr(checks, "pids_cgroup_root", lambda: None)
    [message] = [m for m in run_checks(tags=[Tags.security]) if m.id == "sf.W013"]
    assert "processes limit" in message.msg


def test_the_system_check_reports_root_without_the_sandbox_user(
    monkeypatch: pytest.MonkeyPatch, settings
) -> None:
    import agents_app.runtime.sandbox_user as sandbox_user

    monkeypatch.setattr(sandbox_user.os, "geteuid", lambda: 0)
    settings.SF_SANDBOX_USER = "nobody"
    assert "sf.W015" not in [m.id for m in run_checks(tags=[Tags.security])]
    settings.SF_SANDBOX_USER = "sf-no-such-user"
    [message] = [m for m in run_checks(tags=[Tags.security]) if m.id == "sf.W015"]
    assert "there is no user 'sf-no-such-user' (SF_SANDBOX_USER)" in message.msg
    assert "chmod 0 /dev/null" in message.msg
    assert sandbox_user.host_user() is None  # commands run as root, as before


def test_the_system_check_reports_no_memory_cgroup(monkeypatch: pytest.MonkeyPatch) -> None:
    import agents_app.sandbox_checks as checks

    monkeypatch.setattr(checks, "memory_cgroup_root", lambda: Path("/sys/fs/cgroup/memory/x"))
    assert "sf.W014" not in [m.id for m in run_checks(tags=[Tags.security])]
    monkeypatch.setattr(checks, "memory_cgroup_root", lambda: None)
    [message] = [m for m in run_checks(tags=[Tags.security]) if m.id == "sf.W014"]
    assert "memory is limited per process only (RLIMIT_AS" in message.msg


def test_a_command_above_restricted_is_refused_without_the_sandbox(
    settings, worktree: Path, tmp_path: Path
) -> None:
    settings.SF_SANDBOX_BWRAP = str(tmp_path / "no-bwrap")
    spec = TOOLS["run_command"]
    trusted = ToolContext(worktree=worktree, sandbox=lambda: policy_for("trusted", []))
    with pytest.raises(ToolError, match="needs the OS sandbox"):
        spec.run(trusted, spec.parse({"command": "touch ran"}))
    assert not (worktree / "ran").exists()
    normal = ToolContext(worktree=worktree, sandbox=lambda: policy_for("normal", []))
    with pytest.raises(ToolError, match="the normal profile needs the OS sandbox"):
        spec.run(normal, spec.parse({"command": "touch ran"}))
    read_only = ToolContext(worktree=worktree, sandbox=lambda: policy_for("restricted", []))
    assert spec.run(read_only, spec.parse({"command": "echo $HOME"})).endswith(f"{worktree}\n")
    settings.SF_SANDBOX = "off"
    assert spec.run(trusted, spec.parse({"command": "touch ran"})).startswith("exit code 0")
    assert (worktree / "ran").exists()
