"""Egress of sandboxed commands: a filtering HTTP(S) proxy SF runs, the only way out.

A sandboxed command always has a network namespace of its own (bubblewrap's
``--unshare-net``: nothing but its own loopback). When its policy grants egress, SF
starts this proxy on a Unix socket for the length of the command, binds the socket's
directory into the sandbox at ``/run/sf-egress``, and runs the command behind a
bridge (Debian's ``socat``) that listens on the sandbox's own ``127.0.0.1:3128`` and
relays to the socket. socat rather than a Python relay: a Python interpreter's start
costs 40-60 ms per command on a loaded 2-core host, socat's a few. ``HTTP_PROXY``,
``HTTPS_PROXY`` (and the lower-case and ``ALL_PROXY`` forms) point there, so pip,
npm, curl, git and cargo use it without being told.

The proxy speaks ``CONNECT host:port`` (https: the TLS stays end to end, SF sees only
the name and the port) and absolute-form requests (``GET http://host/path``, sent on
in origin form with ``Connection: close``). For each request it checks the host
against the project's ``egress`` list (a domain, ``*.domain`` for its subdomains,
``*`` for every public host), resolves it once through ``sf_core.netguard`` (which
refuses loopback, private, link-local, metadata, CGNAT and the IPv6 forms of those),
connects to the address it checked, and records one ``EgressEvent`` (method, host,
port, allowed or refused and why); the caller writes them into the unit's trace.

Why a proxy of our own (asyncio, standard library, ~150 lines) rather than Debian's
tinyproxy or squid: neither can refuse a name by the address it resolves to (squid's
``dst`` ACLs come closest but do not cover NAT64/6to4 forms and resolve separately
from the connection), and both would need a configuration file and a process per
command or a long-lived daemon with its own lifecycle. This one shares the guard
every other outbound connection of SF uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from agents_app.schemas import egress_entry
from sf_core.netguard import AddressRefused, checked_addresses, host_normal

logger = logging.getLogger("sf.egress")

PROXY_PORT = 3128  # on the sandbox's own loopback
INSIDE = "/run/sf-egress"  # where the socket's directory is bound in the sandbox
SOCAT = "/usr/bin/socat"
# The bridge: socat relays the sandbox's 127.0.0.1:3128 to the proxy's socket, and
# the command starts once the port listens (read from /proc/net/tcp of the sandbox's
# own namespace with bash builtins: no polling process, no connection to the proxy),
# so its first request finds the proxy. socat dies with the sandbox's PID namespace.
BRIDGE_SH = f"""{SOCAT} TCP-LISTEN:{PROXY_PORT},bind=127.0.0.1,reuseaddr,fork \\
  UNIX-CONNECT:{INSIDE}/proxy.sock &
listening=": 0100007F:{PROXY_PORT:04X} 00000000:0000 0A "
tries=0
while (( tries++ < 20000 )); do
  while IFS= read -r line; do [[ $line == *"$listening"* ]] && break 2; done </proc/net/tcp
done
exec "$@"
"""
HEAD_LIMIT = 64 * 1024  # bytes of a request line and headers
HEAD_TIMEOUT_S = 30
CONNECT_TIMEOUT_S = 15
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


@dataclass(frozen=True)
class EgressEvent:
    method: str
    host: str
    port: int
    allowed: bool
    reason: str = ""

    def line(self) -> str:
        verdict = "allowed" if self.allowed else f"refused: {self.reason}"
        return f"egress {self.method} {self.host}:{self.port} {verdict}"


def bridge_problem() -> str:
    """Why a command with egress cannot run here ('' when it can)."""
    if Path(SOCAT).exists():
        return ""
    return (
        f"the project grants egress, which needs socat at {SOCAT} "
        "(scripts/setup.sh installs it: apt-get install socat)"
    )


def host_listed(host: str, allow: Sequence[str]) -> bool:
    """Whether ``host`` is in an egress list: exact, ``*.domain`` (any subdomain of
    domain, not domain itself) or ``*`` (every host), with or without a port."""
    return bool(_entries_for(host, allow))


def _entries_for(host: str, allow: Sequence[str]) -> list[int | None]:
    """The ports of the entries of ``allow`` naming ``host`` (None: the defaults)."""
    name = host_normal(host)
    ports = []
    for entry in allow:
        listed, port = egress_entry(entry)
        subdomain = listed.startswith("*.") and name.endswith(listed[1:])
        if listed in ("*", name) or subdomain:
            ports.append(port)
    return ports


def request_problem(method: str, host: str, port: int, allow: Sequence[str]) -> str:
    """Why the proxy refuses ``method host:port`` before resolving anything ('' when
    it goes on to the address check): the host not listed, a method other than CONNECT
    and plain HTTP's usual ones, or a port other than the defaults (CONNECT to 443,
    plain HTTP to 80) that no entry for the host names."""
    ports = _entries_for(host, allow)
    if not ports:
        return "not in the project's egress list"
    if method != "CONNECT" and method not in HTTP_METHODS:
        return f"method {method} is not allowed (CONNECT, {', '.join(HTTP_METHODS)})"
    default = 443 if method == "CONNECT" else 80
    if port == default or port in ports:
        return ""
    return (
        f"port {port} is not open: the proxy allows CONNECT to 443 and plain HTTP to 80; "
        f"the project's egress policy opens another port by naming it ({host}:{port})"
    )


class _Refused(Exception):
    pass


@dataclass
class EgressProxy:
    """The proxy of one command (or one MCP server): ``with EgressProxy(allow) as p``
    serves on ``p.socket`` in a thread of its own until the block ends."""

    allow: tuple[str, ...]
    events: list[EgressEvent] = field(default_factory=list)
    directory: Path = field(init=False)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _server: asyncio.AbstractServer | None = None

    @property
    def socket(self) -> Path:
        return self.directory / "proxy.sock"

    def __enter__(self) -> EgressProxy:
        self.directory = Path(tempfile.mkdtemp(prefix="sf-egress-", dir="/tmp"))
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(started,), name="sf-egress", daemon=True
        )
        self._thread.start()
        started.wait()
        if self._server is None:
            self.__exit__()
            raise OSError(f"the egress proxy could not listen on {self.socket}")
        return self

    def _run(self, started: threading.Event) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        try:
            self._server = self._loop.run_until_complete(
                asyncio.start_unix_server(self._handle, path=str(self.socket), limit=HEAD_LIMIT)
            )
        except OSError:
            logger.exception("egress proxy: cannot listen on %s", self.socket)
        finally:
            started.set()
        if self._server is not None:
            self._loop.run_forever()
        # The connections still open were cancelled by ``_stop``: let them unwind.
        pending = asyncio.all_tasks(self._loop)
        self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    def __exit__(self, *_: object) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(self._stop)
            thread.join(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)

    def _stop(self) -> None:
        assert self._loop is not None
        if self._server is not None:
            self._server.close()
        for task in asyncio.all_tasks(self._loop):
            task.cancel()
        self._loop.stop()

    def traced(self, output: str) -> str:
        """A command's output with one line per request it made through the proxy."""
        if not self.events:
            return output
        lines = [event.line() for event in self.events]
        return "\n".join([output.rstrip("\n"), *lines]) + "\n"

    def bwrap_args(self) -> list[str]:
        """What bubblewrap adds for a command whose only way out is this proxy."""
        proxy = f"http://127.0.0.1:{PROXY_PORT}"
        argv = ["--ro-bind", str(self.directory), INSIDE]
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            argv += ["--setenv", name, proxy, "--setenv", name.lower(), proxy]
        # The sandbox's own loopback (a test server the command starts) is its own.
        own = "localhost,127.0.0.1,::1"
        return [*argv, "--setenv", "NO_PROXY", own, "--setenv", "no_proxy", own]

    def bridge_argv(self, prelude: str = "") -> list[str]:
        """The program that runs before the command in the sandbox: the bridge, after
        ``prelude`` (the sandbox's ``ulimit`` line)."""
        return ["bash", "-c", f"{prelude}\n{BRIDGE_SH}" if prelude else BRIDGE_SH, "sf-egress"]

    # --- the proxy ----------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # a client that went away or sent garbage: nothing to answer
        except TimeoutError:
            pass
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        method, host, port, forward = _parse(head)
        if not method:
            writer.write(_answer(400, "egress: not an HTTP proxy request"))
            return
        try:
            upstream_reader, upstream_writer = await self._open(method, host, port)
        except _Refused as exc:
            writer.write(_answer(403, f"egress: {host}:{port} refused: {exc}"))
            await writer.drain()
            return
        if method == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            upstream_writer.write(forward)
        try:
            await asyncio.gather(
                _pipe(reader, upstream_writer),
                _pipe(upstream_reader, writer),
                return_exceptions=True,
            )
        finally:
            upstream_writer.close()

    async def _open(
        self, method: str, host: str, port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Check ``host`` (list, then addresses after resolving) and connect to an
        address that was checked; every outcome is recorded."""
        try:
            problem = request_problem(method, host, port, self.allow)
            if problem:
                raise _Refused(problem)
            loop = asyncio.get_running_loop()
            try:
                addresses = await loop.run_in_executor(None, checked_addresses, host, port)
            except AddressRefused as exc:
                raise _Refused(str(exc)) from None
            connection = await _connect(addresses, port)
        except _Refused as exc:
            self._record(EgressEvent(method, host, port, False, str(exc)))
            raise
        self._record(EgressEvent(method, host, port, True))
        return connection

    def _record(self, event: EgressEvent) -> None:
        self.events.append(event)
        logger.info("%s", event.line())


async def _connect(
    addresses: Sequence[object], port: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    error: Exception | None = None
    for ip in addresses:
        try:
            return await asyncio.wait_for(asyncio.open_connection(str(ip), port), CONNECT_TIMEOUT_S)
        except (TimeoutError, OSError) as exc:
            error = exc
    raise _Refused(f"unreachable ({error})")


def _parse(head: bytes) -> tuple[str, str, int, bytes]:
    """(method, host, port, the head to send upstream) of a proxy request; method ''
    when it is none."""
    text = head.decode("latin-1")
    request_line, _, rest = text.partition("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return "", "", 0, b""
    method, target, version = parts
    if method == "CONNECT":
        url = urlsplit(f"//{target}")
        if not url.hostname or not url.port:
            return "", "", 0, b""
        return method, url.hostname, url.port, b""
    url = urlsplit(target)
    if url.scheme != "http" or not url.hostname:
        return "", "", 0, b""
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    headers = [
        line
        for line in rest.split("\r\n")
        if line and not line.lower().startswith(("proxy-", "connection:", "keep-alive:"))
    ]
    forward = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
    return method, url.hostname, url.port or 80, forward.encode("latin-1")


def _answer(status: int, text: str) -> bytes:
    body = (text + "\n").encode()
    reason = {400: "Bad Request", 403: "Forbidden"}[status]
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return head.encode() + body


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if sink.can_write_eof():
                sink.write_eof()


@contextlib.contextmanager
def egress_for(allow: Sequence[str]) -> Iterator[EgressProxy | None]:
    """The proxy of a command whose policy grants ``allow`` (None: no egress at all)."""
    if not allow:
        yield None
        return
    with EgressProxy(tuple(allow)) as proxy:
        yield proxy
