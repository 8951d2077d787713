"""The sandbox holds when SF runs as root and when it runs as an ordinary user: every
test here runs with the real bubblewrap twice, as ``root`` and as ``sfsandboxtest``
(created when missing; bwrap started through ``setpriv --reuid``). Each reproduces a
finding of the security review (issue 27) that got out of the sandbox before."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from agents_app.runtime.sandbox import (
    CommandRun,
    Launch,
    SandboxPolicy,
    bwrap_problem,
    group_run,
    sandbox_prefix,
    sandboxed_run,
    sf_own_paths,
)
from agents_app.runtime.sandbox_limits import memory_cgroup_root
from agents_app.runtime.sandbox_user import host_user
from agents_app.schemas import SandboxLimits
from agents_app.tests import sandbox_users
from agents_app.tests.sandbox_users import BWRAP, ENV, USERS, own
from conftest import make_git_repo
from sf_core.git import git, linked_worktree

pytestmark = pytest.mark.skipif(
    bool(bwrap_problem(BWRAP)), reason="bubblewrap is required (scripts/setup.sh)"
)


@pytest.fixture(scope="module", params=USERS)
def user(request: pytest.FixtureRequest) -> str:
    """Who runs bwrap: ``root`` (as scripts/run.sh does here) or an ordinary user."""
    return sandbox_users.chosen_user(request)


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    yield from sandbox_users.shared_place()


@pytest.fixture
def worktree(user: str, place: Path) -> Path:
    path = place / "wt"
    path.mkdir()
    own(user, path)
    return path


@pytest.fixture
def git_worktree(user: str, place: Path) -> tuple[Path, Path]:
    """A repository and a linked worktree of it on an SF-like branch."""
    repo = make_git_repo(place / "repo")
    wt = place / "wt"
    subprocess.run(
        ["git", "worktree", "add", "-q", "-b", "sf/p1/k/1", str(wt)], cwd=repo, check=True
    )
    own(user, place)
    return repo, wt


def contained(
    user: str, worktree: Path, command: str, limits: SandboxLimits | None = None
) -> CommandRun:
    """``command`` in the sandbox, with bwrap started by ``user``."""
    policy = SandboxPolicy(profile="normal", limits=limits or SandboxLimits())
    return sandbox_users.contained(user, worktree, command, policy)


def test_bwrap_runs_as_the_user_named_in_the_test_id(user: str, worktree: Path) -> None:
    # The user bwrap runs as owns the files the command writes: SF's own user, or when
    # SF is root the unprivileged SF_SANDBOX_USER.
    contained(user, worktree, "echo hi > mine.txt")
    owner = pwd.getpwuid((worktree / "mine.txt").stat().st_uid).pw_name
    assert owner == (str(django_settings.SF_SANDBOX_USER) if user == "root" else user)


def test_no_capability_and_no_new_namespace_inside(user: str, worktree: Path) -> None:
    done = contained(
        user,
        worktree,
        "id -un; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; "
        "unshare -r true || echo UNSHARE-REFUSED",
    )
    assert done.output.splitlines()[0] == "sandbox"
    assert "CapEff:\t0000000000000000" in done.output
    assert "CapBnd:\t0000000000000000" in done.output
    assert "UNSHARE-REFUSED" in done.output


def test_the_kernels_settings_are_read_only(user: str, worktree: Path) -> None:
    # The sandbox's uid is mapped to the uid that started bwrap: root here, whom the
    # kernel lets write its sysctls without any capability. kernel.core_pattern
    # ("|program") then runs a program of the command's as the host's root at the next
    # crash. The test writes back the value there is, so that it changes nothing.
    done = contained(
        user,
        worktree,
        "pattern=$(cat /proc/sys/kernel/core_pattern) && echo READ; "
        'printf "%s\\n" "$pattern" > /proc/sys/kernel/core_pattern && echo WRITTEN; '
        "echo x > /proc/sysrq-trigger",
    )
    assert "READ" in done.output
    assert "WRITTEN" not in done.output, done.output


SETUID = """
import os
made = []
for name, how in (("open", 0o4755), ("open-gid", 0o2755), ("chmod", 0o4755)):
    try:
        if name == "chmod":
            os.chmod(os.open("plain", os.O_CREAT | os.O_WRONLY, 0o755), how)
        else:
            os.close(os.open(name, os.O_CREAT | os.O_WRONLY, how))
        made.append(name)
    except OSError as exc:
        print(name, exc)
print("made", made)
"""


def test_no_setuid_or_setgid_file_can_be_made(user: str, worktree: Path) -> None:
    # Files the command makes are the bwrap user's on the host: as root, a setuid
    # file in the worktree was a setuid-root program for every user of the host.
    io_uring_setup = "import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(425, 1, 0))"
    done = contained(
        user,
        worktree,
        f"python3 -c '{SETUID}'; chmod u+s plain; chmod g+s plain; python3 -c '{io_uring_setup}'",
    )
    assert "made []" in done.output, done.output
    assert done.output.rstrip().endswith("-1"), "io_uring (its operations skip the filter)"
    modes = {path.name: path.stat().st_mode for path in worktree.iterdir()}
    assert not [name for name, mode in modes.items() if mode & 0o6000], modes


def test_remounting_the_repository_git_writable_is_refused(
    user: str, git_worktree: tuple[Path, Path]
) -> None:
    repo, wt = git_worktree
    config = repo / ".git/config"
    before = config.read_text()
    done = contained(
        user, wt, f"mount -o remount,rw,bind {repo}/.git; echo '[core] fsmonitor = x' >> {config}"
    )
    assert done.exit_code != 0
    assert config.read_text() == before


def test_umount_shows_nothing_of_run_or_a_hidden_path(user: str, worktree: Path) -> None:
    checkout = Path(django_settings.BASE_DIR)
    assert (checkout / "manage.py").exists()
    assert Path("/run/postgresql").exists()
    done = contained(
        user,
        worktree,
        f"umount /run; umount -l {checkout}; ls /run/postgresql && echo RUN-SEEN; "
        f"cat {checkout}/manage.py >/dev/null && echo CHECKOUT-SEEN; echo done",
    )
    assert "done" in done.output
    assert "RUN-SEEN" not in done.output
    assert "CHECKOUT-SEEN" not in done.output


def test_the_worktree_admin_files_cannot_be_rewritten(
    user: str, git_worktree: tuple[Path, Path]
) -> None:
    repo, wt = git_worktree
    admin = repo / ".git/worktrees/wt"
    files = [admin / "commondir", admin / "gitdir", wt / ".git"]
    before = {path: path.read_text() for path in files}
    planted = "gitdir: /tmp/planted\n"
    writes = "; ".join(f"echo '{planted.strip()}' > {path}" for path in files)
    moves = f"mv {wt}/.git {wt}/.git.old; rm -f {admin}/commondir"
    done = contained(user, wt, f"{writes}; {moves}; git -C {wt} status --short; echo done")
    assert "done" in done.output
    assert {path: path.read_text() for path in files} == before


@pytest.fixture
def other_checkout() -> Iterator[Path]:
    """Another checkout's ``.sf/env`` where the old sandbox showed it: outside the
    worktree, outside /tmp and $HOME (those were hidden already)."""
    base = Path("/srv") if os.access("/srv", os.W_OK) else Path("/var/lib")
    place = Path(tempfile.mkdtemp(prefix="sf-other-checkout-", dir=base))
    place.chmod(0o755)
    (place / ".sf").mkdir()
    (place / ".sf/env").write_text("DATABASE_URL=postgres://sf:secret@db/sf_other\n")
    (place / ".sf/env").chmod(0o644)
    try:
        yield place
    finally:
        shutil.rmtree(place, ignore_errors=True)


def test_another_checkouts_env_and_etc_shadow_are_unreadable(
    user: str, worktree: Path, other_checkout: Path
) -> None:
    assert Path("/etc/shadow").exists()
    done = contained(
        user,
        worktree,
        f"cat {other_checkout}/.sf/env; cat /etc/shadow; ls /srv /var/lib /work; ls -A ~ | wc -l",
    )
    assert "secret" not in done.output
    assert not [line for line in done.output.splitlines() if line.startswith("root:")]
    assert done.output.count("No such file or directory") == 5, done.output
    assert done.output.split()[-1] == "0"  # $HOME is empty


FORK_BOMB = """
import os, time
children = 0
try:
    while children < 300:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        children += 1
finally:
    print("children", children, flush=True)
"""


def test_a_fork_bomb_is_bounded(user: str, worktree: Path) -> None:
    limits = SandboxLimits(processes=64)
    done = contained(user, worktree, f"python3 -c '{FORK_BOMB}'", limits)
    assert done.exit_code == 1, done.output
    children = int(done.output.split("children ")[1].split()[0])
    assert 8 < children < 64, done.output
    assert "BlockingIOError: [Errno 11] Resource temporarily unavailable" in done.output
    assert "processes limit (64; the project policy's sandbox.processes)" in done.output


def test_a_memory_hog_is_bounded(user: str, worktree: Path) -> None:
    limits = SandboxLimits(memory_mb=256)
    done = contained(
        user, worktree, "python3 -c 'b = bytearray(768 * 1024 * 1024); print(len(b))'", limits
    )
    assert done.exit_code != 0
    assert "MemoryError" in done.output
    assert "memory (address space) limit (256 MiB; the project policy's sandbox.memory_mb)" in (
        done.output
    )


# The parent holds 100 MiB while its child takes another 100 MiB: each process stays
# under the address-space limit (160 MiB), the two together go over the cgroup's.
TWO_HOGS = (
    "import subprocess; held = bytes(range(256)) * (400 << 10); "
    "subprocess.run(['python3', '-c', 'b = bytes(range(256)) * (400 << 10)']); "
    "print('both survived')"
)


def test_a_command_over_its_memory_cgroup_is_killed_and_the_limit_named(
    user: str, worktree: Path
) -> None:
    if user != "root" or memory_cgroup_root() is None:
        pytest.skip("memory cgroups: SF as root here (cgroup v1), or a delegated v2 subtree")
    done = contained(user, worktree, f'python3 -c "{TWO_HOGS}"', SandboxLimits(memory_mb=160))
    assert "both survived" not in done.output
    assert done.output.rstrip().endswith(
        "[sandbox] the command ran into its memory (the command's cgroup; a process was "
        "killed) limit (160 MiB; the project policy's sandbox.memory_mb)"
    ), done.output


def test_tmp_is_private_and_size_limited(user: str, worktree: Path) -> None:
    limits = SandboxLimits(tmp_mb=8)
    done = contained(user, worktree, "df -k /tmp; head -c 20000000 /dev/zero > /tmp/big", limits)
    assert "No space left on device" in done.output
    assert "/tmp size limit (8 MiB; the project policy's sandbox.tmp_mb)" in done.output


def test_a_worktree_head_moved_by_a_command_widens_no_later_bind(
    user: str, git_worktree: tuple[Path, Path]
) -> None:
    # The writable ref directories are the branch's, read from the worktree's HEAD: a
    # command that moved HEAD to ``sf/p1/k/evil/x``, ``evil`` a relative link up to
    # ``/`` and down to ``tmp``, had the next command's bwrap bind the host's /tmp
    # (resolved from the old root) over the sandbox's /tmp (from the new root),
    # writable; one that moved it to ``refs/heads/zzz`` got every branch writable.
    repo, wt = git_worktree
    refs = repo / ".git/refs/heads/sf/p1/k"
    up = "../" * (len(refs.parts) - 1)
    admin = repo / ".git/worktrees/wt"
    main = (repo / ".git/refs/heads/main").read_text()
    marker = f"sf-escaped-{os.getpid()}"
    try:
        contained(
            user,
            wt,
            f"ln -s {up}tmp {refs}/evil; echo 'ref: refs/heads/sf/p1/k/evil/x' > {admin}/HEAD",
        )
        contained(user, wt, f"echo out > /tmp/{marker}; echo done")
        contained(user, wt, f"echo 'ref: refs/heads/zzz' > {admin}/HEAD")
        contained(user, wt, f"echo {'0' * 40} > {repo}/.git/refs/heads/main")
        assert not Path("/tmp", marker).exists()
        assert (repo / ".git/refs/heads/main").read_text() == main
        assert (admin / "HEAD").read_text() == "ref: refs/heads/sf/p1/k/1\n"
    finally:
        Path("/tmp", marker).unlink(missing_ok=True)


def test_dev_holds_no_files_of_the_command(user: str, worktree: Path) -> None:
    # bwrap's /dev is a tmpfs without a size (half the host's memory), writable by the
    # command: 12 GiB of RAM past tmp_mb, and past RLIMIT_AS (tmpfs pages are nobody's
    # address space). Its devices still work.
    done = contained(
        user,
        worktree,
        "head -c 20000000 /dev/zero > /dev/big && echo DEV-WRITTEN; mkdir /dev/d && echo MADE; "
        "echo x > /dev/null && head -c 4 /dev/urandom | wc -c; echo x > /dev/shm/x && echo SHM",
        SandboxLimits(tmp_mb=8),
    )
    assert "DEV-WRITTEN" not in done.output, done.output
    assert "MADE" not in done.output, done.output
    assert "Read-only file system" in done.output
    assert done.output.split()[-2:] == ["4", "SHM"], done.output


# --- as root, a command is an unprivileged user of the host (sandbox_user) -------------


@pytest.fixture
def as_root(user: str) -> None:
    if user != "root":
        pytest.skip("bwrap as an ordinary user: the files are that user's, SF's own here")


def test_the_hosts_device_nodes_cannot_be_changed(as_root: None, user: str, worktree: Path) -> None:
    # bwrap binds the host's /dev/null (and zero, full, random, urandom, tty) into /dev:
    # started by root, the command was their owner to the kernel, and chmod 0 /dev/null
    # broke every program of the host. The test puts back what there was, whatever.
    before = os.stat("/dev/null")
    try:
        done = contained(
            user, worktree, "chmod 0 /dev/null; touch -d 2001-01-01 /dev/urandom; echo x >/dev/null"
        )
        assert os.stat("/dev/null").st_mode == before.st_mode, done.output
        assert os.stat("/dev/urandom").st_mtime > 978307200 + 86400, done.output
        assert "Operation not permitted" in done.output
    finally:
        os.chmod("/dev/null", before.st_mode & 0o7777)


def test_root_owned_files_bound_writable_stay_unwritable(
    as_root: None, user: str, git_worktree: tuple[Path, Path]
) -> None:
    # The repository's objects (0444, root's) under the writable objects/, and a
    # read-only file in the worktree: the command owned them all when bwrap was root's.
    repo, wt = git_worktree
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    blob = repo / ".git/objects" / head[:2] / head[2:]
    (wt / "frozen.txt").write_text("root's\n")
    (wt / "frozen.txt").chmod(0o444)
    before = blob.read_bytes()
    contained(
        user,
        wt,
        f"chmod 644 {blob} frozen.txt; echo x >> {blob}; echo x >> frozen.txt; rm -f {blob}",
    )
    assert blob.read_bytes() == before
    assert (wt / "frozen.txt").read_text() == "root's\n"
    assert (wt / "frozen.txt").stat().st_mode & 0o777 == 0o444


def test_git_directories_hold_no_link_a_command_planted_in_objects(
    as_root: None, user: str, git_worktree: tuple[Path, Path]
) -> None:
    # objects/ itself is not the sandbox user's to write (its fan-out directories are):
    # a link there, which SF's git would write a new object through, cannot be made —
    # not by this unit's command, nor by another unit's while SF's git runs.
    repo, wt = git_worktree
    objects = repo / ".git/objects"
    done = contained(
        user,
        wt,
        f"ln -s /tmp {objects}/zz-planted; mv {objects}/pack {objects}/pack.old; echo done",
    )
    assert "done" in done.output
    assert sorted(path.name for path in objects.iterdir() if path.is_symlink()) == []
    assert (objects / "pack").is_dir()


def test_normal_work_as_the_sandbox_user(
    as_root: None, user: str, git_worktree: tuple[Path, Path]
) -> None:
    # The worktree and its git directories are the sandbox user's to write through ACLs
    # (root's files, root's git): writing, editing SF's files, git and python work, and
    # SF's own git (root, naming GIT_DIR) reads what the command committed.
    repo, wt = git_worktree
    contained(user, wt, "true")  # the worktree's first command: the grant
    (wt / "by-sf.txt").write_text("sf\n")  # made by SF (root) since: the default ACL
    done = contained(
        user,
        wt,
        "echo new > new.txt && echo more >> by-sf.txt && mkdir -p d/e && echo x > d/e/f && "
        "git add -A && git commit -qm work && git status --short && "
        "python3 -c 'print(6 * 7)'",
    )
    assert done.exit_code == 0, done.output
    assert done.output.strip() == "42", done.output
    log = git_cmd(repo, wt, "log", "--format=%s", "-1")
    assert log == "work"
    assert git_cmd(repo, wt, "status", "--porcelain") == ""


def git_cmd(repo: Path, wt: Path, *args: str) -> str:
    return git(*args, cwd=linked_worktree(repo, wt)).strip()


def test_no_process_of_a_timed_out_command_outlives_it(
    as_root: None, user: str, worktree: Path
) -> None:
    # A timeout kills bwrap; its sandbox's processes die with it (--die-with-parent)
    # but asynchronously, and one could still plant a link while SF's git ran next.
    # sandboxed_run returns once none of them is alive (the command's pids cgroup).
    tag = str(uuid.uuid4().int % 10**8)
    command = f"(while :; do ln -sfn /tmp planted-{tag}; done) & sleep 1000.{tag}"
    policy = SandboxPolicy(profile="normal")
    done = sandboxed_run(command, worktree=worktree, policy=policy, env=ENV, timeout=1)
    assert done.exit_code is None
    assert [pid for pid in os.listdir("/proc") if pid.isdigit() and tag in _cmdline(pid)] == []


def _cmdline(pid: str) -> str:
    try:
        return Path("/proc", pid, "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_an_mcp_servers_git_directories_are_read_only(
    user: str, git_worktree: tuple[Path, Path]
) -> None:
    # A server lives as long as its unit, beside SF's git: it may write the worktree
    # (its write tools), never the git directories, where a link would be followed.
    repo, wt = git_worktree
    admin, refs = repo / ".git/worktrees/wt", repo / ".git/refs/heads/sf/p1/k"
    targets = [admin / "planted", refs / "planted", repo / ".git/objects/pack/planted"]
    plant = "; ".join(f"ln -s /tmp {path}" for path in targets)
    prefix = sandbox_prefix(
        worktree=wt,
        policy=SandboxPolicy(profile="normal"),
        bwrap=BWRAP,
        home=Path("/home/mcp"),
        hidden=sf_own_paths(),
        launch=Launch(user=host_user() if user == "root" else None),
    )
    argv = [
        *sandbox_users.become(user),
        *prefix,
        "bash",
        "-c",
        f"{plant}; echo x > made; echo done",
    ]
    _, output = group_run(argv, cwd=wt, env=ENV, timeout=30)
    assert "done" in output, output
    assert [path for path in targets if os.path.lexists(path)] == []
    assert (wt / "made").read_text() == "x\n"
