"""A counting HTTP proxy in front of the model server: every harness's model calls and
tokens measured the same way, from the server's own ``usage`` (streaming included).

One proxy per (harness, task): it forwards every request to the upstream server as it
is, relays the answer as it comes (server-sent events chunk by chunk), and counts, for
each POST to a completions endpoint, one call and the tokens the server reports: the
``usage`` object (OpenAI's shape, in the JSON answer or in any streamed chunk) or, when
there is none, llama.cpp's ``timings``. ``prompt_evaluated`` is what the server had to
read anew (llama.cpp's ``timings.prompt_n``: the prompt minus its cached prefix).
Closing the proxy closes its upstream connections too, so a harness killed at the cap
does not leave the server generating for nobody.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host"}
    | {"proxy-authorization", "proxy-authenticate", "content-length", "accept-encoding"}
)


@dataclass
class Counts:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_evaluated: int = 0
    failed_calls: int = 0  # answered with a status >= 400, or cut off

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class Usage:
    """The tokens one answer reports; the last report seen wins (streams repeat it)."""

    def __init__(self) -> None:
        self.prompt = self.completion = self.evaluated = 0
        self._buffer = b""

    def feed_json(self, body: bytes) -> None:
        with contextlib.suppress(ValueError):
            self._take(json.loads(body))

    def feed_stream(self, chunk: bytes) -> None:
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            data = line.strip()
            if data.startswith(b"data:") and data[5:].strip() != b"[DONE]":
                self.feed_json(data[5:])

    def _take(self, answer: Any) -> None:
        if not isinstance(answer, dict):
            return
        usage, timings = answer.get("usage"), answer.get("timings")
        if isinstance(usage, dict):
            self.prompt = int(usage.get("prompt_tokens") or 0)
            self.completion = int(usage.get("completion_tokens") or 0)
        if isinstance(timings, dict):
            self.evaluated = int(timings.get("prompt_n") or 0)
            if not isinstance(usage, dict):
                self.prompt = int(timings.get("prompt_n") or 0) + int(timings.get("cache_n") or 0)
                self.completion = int(timings.get("predicted_n") or 0)


class CountingProxy:
    """``with CountingProxy(upstream) as proxy:`` — point a harness at ``proxy.url``."""

    def __init__(self, upstream: str, timeout: float = 900) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname or not parts.port:
            raise ValueError(f"upstream {upstream!r}: expected http://HOST:PORT")
        self.upstream = (parts.hostname, parts.port)
        self.timeout = timeout
        self.counts = Counts()
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()
        self._idle = threading.Condition(self._lock)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving, cut what is still in flight and wait for it to be counted."""
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for connection in list(self._open):
                _cut(connection)
            self._idle.wait_for(lambda: not self._open, timeout=10)

    def connect(self) -> http.client.HTTPConnection:
        connection = http.client.HTTPConnection(*self.upstream, timeout=self.timeout)
        with self._lock:
            self._open.add(connection)
        return connection

    def done(self, connection: http.client.HTTPConnection, usage: Usage | None, ok: bool) -> None:
        connection.close()
        with self._lock:
            self._open.discard(connection)
            self._idle.notify_all()
            if usage is None:
                return
            self.counts.calls += 1
            self.counts.failed_calls += not ok
            self.counts.prompt_tokens += usage.prompt
            self.counts.completion_tokens += usage.completion
            self.counts.prompt_evaluated += usage.evaluated


def _cut(connection: http.client.HTTPConnection) -> None:
    if connection.sock is not None:
        with contextlib.suppress(OSError):
            connection.sock.shutdown(socket.SHUT_RDWR)
    connection.close()


def _handler(proxy: CountingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the answer ends when the connection closes

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the harnesses' own output is what matters

        def do_GET(self) -> None:
            self._forward()

        def do_POST(self) -> None:
            self._forward()

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            counted = self.command == "POST" and self.path.rstrip("/").endswith("completions")
            usage = Usage() if counted else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            connection = proxy.connect()
            ok = False
            try:
                connection.request(self.command, self.path, body=body, headers=headers)
                answer = connection.getresponse()
                self._relay(answer, usage)
                ok = answer.status < 400
            except (OSError, ValueError, AttributeError, http.client.HTTPException):
                # The harness went away or the proxy cut the answer (http.client raises
                # ValueError or AttributeError when its socket is closed mid-read).
                pass
            finally:
                proxy.done(connection, usage, ok)

        def _relay(self, answer: http.client.HTTPResponse, usage: Usage | None) -> None:
            self.send_response(answer.status)
            streaming = "text/event-stream" in (answer.getheader("Content-Type") or "")
            for name, value in answer.getheaders():
                lower = name.lower()
                if lower in ("server", "date"):
                    continue  # send_response wrote ours
                if lower not in HOP_BY_HOP or lower == "content-length":
                    self.send_header(name, value)
            self.end_headers()
            whole = b""
            while chunk := answer.read1(65536):
                self.wfile.write(chunk)
                self.wfile.flush()
                if usage is not None and streaming:
                    usage.feed_stream(chunk)
                elif usage is not None:
                    whole += chunk
            if usage is not None and not streaming:
                usage.feed_json(whole)

    return Handler
