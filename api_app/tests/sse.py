"""A server-sent events client for the tests: httpx streaming, parsed as the spec says
(fields until a blank line; ``:`` starts a comment; ``retry`` sets the delay)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import httpx

from tasks_app.features.headless.events import event_parse


@dataclass
class Message:
    id: str | None
    data: str

    @property
    def event(self) -> Any:
        """The message's data as an event of headless's schema (validated)."""
        return event_parse(self.data)


@dataclass
class Stream:
    status: int = 0
    content_type: str = ""
    retry: int | None = None
    messages: list[Message] = field(default_factory=list)
    ended: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None

    def events(self, *, heartbeats: bool = False) -> list[Any]:
        found = [message.event for message in self.messages]
        return found if heartbeats else [e for e in found if e.type != "heartbeat"]

    def wait_for(self, predicate: Any, timeout: float = 60) -> Any:
        """The first event matching ``predicate`` (waiting for it to arrive)."""
        deadline = threading.Event()
        timer = threading.Timer(timeout, deadline.set)
        timer.start()
        try:
            while not deadline.is_set():
                for message in list(self.messages):
                    if predicate(message.event):
                        return message.event
                if self.ended.is_set():
                    break
                deadline.wait(0.05)
        finally:
            timer.cancel()
        raise AssertionError(f"no such event; got {[m.event.type for m in self.messages]}")


def read(url: str, headers: dict[str, str], stream: Stream, timeout: float = 120) -> Stream:
    """Read the whole stream into ``stream`` (until the server ends it)."""
    try:
        with httpx.stream("GET", url, headers=headers, timeout=timeout) as response:
            stream.status = response.status_code
            stream.content_type = response.headers.get("content-type", "")
            if response.status_code == 200:
                _parse(response.iter_lines(), stream)
            else:
                response.read()
    except BaseException as exc:  # reported by the test that waits for the stream
        stream.error = exc
    finally:
        stream.ended.set()
    return stream


def read_in_background(url: str, headers: dict[str, str]) -> tuple[Stream, threading.Thread]:
    stream = Stream()
    thread = threading.Thread(target=read, args=(url, headers, stream), daemon=True)
    thread.start()
    return stream, thread


def _parse(lines: Any, stream: Stream) -> None:
    event_id: str | None = None
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                stream.messages.append(Message(event_id, "\n".join(data)))
            event_id, data = None, []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "id":
                event_id = value
            elif name == "data":
                data.append(value)
            elif name == "retry":
                stream.retry = int(value)
