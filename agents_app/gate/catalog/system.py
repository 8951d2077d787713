"""The host and irreversible operations: package managers of the system, services,
users, disks, power, infrastructure, databases, shred.

The irreversible ones (formatting a disk, dropping a database, destroying
infrastructure, shutting down) carry a harness id a person confirms under every profile.
"""

from __future__ import annotations

import re

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.catalog.options import has_short, operands, unchecked
from agents_app.gate.shell.commands import SimpleCommand

_HOST = (
    "apt apt-get aptitude dpkg yum dnf zypper pacman apk brew snap flatpak port service launchctl "
    "pkill killall mount umount useradd userdel usermod groupadd passwd chpasswd visudo iptables "
    "nft ufw sysctl modprobe insmod rmmod swapon swapoff hwclock timedatectl hostnamectl loginctl "
    "update-alternatives ldconfig setcap chattr sudoedit su sudo doas gem"
)


_SQL_DESTRUCTIVE = re.compile(r"\b(drop|truncate)\s+\w|\bdelete\s+from\b|\bflush(all|db)\b", re.I)
_INFRA_DESTROY = {
    "kubectl": ("delete", "drain"),
    "helm": ("uninstall", "delete"),
    "terraform": ("destroy", "-destroy"),
    "tofu": ("destroy", "-destroy"),
    "pulumi": ("destroy",),
    "docker": ("prune", "rm", "rmi", "down"),
    "podman": ("prune", "rm", "rmi"),
    "docker-compose": ("down",),
}


def _infra(command: SimpleCommand) -> Facts:
    destroys = _INFRA_DESTROY.get(command.name, ())
    if any(arg in destroys for arg in command.args):
        return Facts("unknown", harness="infra-destroy", path_checked=False)
    if command.name in ("aws", "gcloud", "az") and any(_cloud_delete(a) for a in command.args):
        return Facts("unknown", harness="infra-destroy", path_checked=False)
    return Facts("unknown", path_checked=False)


def _cloud_delete(arg: str) -> bool:
    return arg in ("delete", "rm", "rb", "terminate") or arg.startswith(("delete-", "terminate-"))


def _database(command: SimpleCommand) -> Facts:
    texts = [*command.args, *(r.target for r in command.redirects if r.op in ("<<", "<<<"))]
    if command.name in ("dropdb", "dropuser") or any(_SQL_DESTRUCTIVE.search(t) for t in texts):
        return Facts("unknown", harness="database-drop", path_checked=False)
    return Facts("unknown", path_checked=False)


def _power(command: SimpleCommand) -> Facts:
    return Facts("host", harness="power")


def _systemctl(command: SimpleCommand) -> Facts:
    power = {"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "rescue"}
    return Facts("host", harness="power" if power & set(command.args) else "")


def _init(command: SimpleCommand) -> Facts:
    return Facts("host", harness="power" if set(command.args) & {"0", "6"} else "")


def _kill(command: SimpleCommand) -> Facts:
    # kill -1 / kill -9 -1: the target -1 is every process the user may signal.
    targets = [w.value for w in command.words[1:]]
    everything = command.name == "killall5" or "-1" in targets[1:] or targets == ["-1"]
    return Facts("host", harness="kill-all" if everything else "")


def disk(command: SimpleCommand) -> Facts:
    devices = tuple(
        w for w in operands(command.words[1:], "tbLmLcO") if w.value.startswith("/dev/")
    )
    return Facts("host", writes=devices, harness="disk")


def _crontab(command: SimpleCommand) -> Facts:
    return Facts("host", harness="crontab-remove" if has_short(command, "r") else "")


def _shred(command: SimpleCommand) -> Facts:
    found = tuple(operands(command.words[1:], "nsu"))
    return Facts("write", writes=found, deletes=True, harness="shred")


HANDLERS: dict[str, Handler] = {
    **{name: unchecked("host") for name in _HOST.split()},
    "shred": _shred,
    **dict.fromkeys(_INFRA_DESTROY, _infra),
    **dict.fromkeys(("aws", "gcloud", "az"), _infra),
    **dict.fromkeys(
        ("psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "mongo", "mongosh", "redis-cli"),
        _database,
    ),
    **dict.fromkeys(("dropdb", "dropuser"), _database),
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff"), _power),
    **dict.fromkeys(("init", "telinit"), _init),
    "systemctl": _systemctl,
    **dict.fromkeys(("kill", "killall5"), _kill),
    **dict.fromkeys(
        ("mkfs", "mke2fs", "mkswap", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk"),
        disk,
    ),
    **dict.fromkeys(("wipefs", "blkdiscard"), disk),
    "crontab": _crontab,
}
