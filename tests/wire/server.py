"""A scripted HTTP server in the test process, for real SDK clients to talk to.

Each test queues the replies the server gives, in order; the server records every request
it receives and rejects, as the real provider would, the ones that break the provider's
rules (the provider module passed in says what those are and how errors look).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol


@dataclass
class Reply:
    """One scripted answer: a JSON body, or a list of stream events, or an error status."""

    status: int = 200
    body: Any = None
    events: list[dict[str, Any]] | None = None
    """Stream events (dicts); the provider module encodes them as SSE."""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (for timeout tests)."""
    raw_sse: str | None = None
    """SSE text sent as it is (for streams a provider module would not build)."""


@dataclass
class Received:
    """A request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any
    at: float
    rejected: str | None = None
    """Why the server refused it as the provider would (None: accepted)."""


class Provider(Protocol):
    def check(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        """None, or the status and message the real provider answers this request with."""

    def error_body(self, status: int, message: str) -> dict[str, Any]: ...

    def encode(self, events: list[dict[str, Any]], request: Any) -> str | bytes: ...


class FakeServer:
    """A provider's HTTP API on 127.0.0.1, answering from a script."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self.script: deque[Reply | Callable[[Any], Reply]] = deque()
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def add(self, *replies: Reply | Callable[[Any], Reply]) -> FakeServer:
        """Queue replies, given to the next requests in order."""
        self.script.extend(replies)
        return self

    @property
    def bodies(self) -> list[Any]:
        """The bodies of the requests the server accepted, in order."""
        return [r.body for r in self.received if r.rejected is None]

    @property
    def rejections(self) -> list[str]:
        return [r.rejected for r in self.received if r.rejected is not None]

    def _answer(self, path: str, headers: dict[str, str], raw: bytes
                ) -> tuple[Reply, str | bytes]:
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        with self._lock:
            problem = self.provider.check(path, headers, body)
            record = Received(path, headers, body, time.monotonic(),
                              problem[1] if problem else None)
            self.received.append(record)
            if problem is not None:
                status, message = problem
                return Reply(status, self.provider.error_body(status, message)), ""
            if not self.script:
                return Reply(500, self.provider.error_body(
                    500, "The fake server's script is exhausted.")), ""
            step = self.script.popleft()
        reply = step(body) if callable(step) else step
        answered = getattr(self.provider, "answered", None)
        if answered is not None:  # a provider that remembers what it gave out
            answered(reply)
        streaming = isinstance(body, dict) and body.get("stream") is True
        if streaming and reply.status == 200 and reply.events is None and reply.raw_sse is None:
            # A mistake in the test's script, not something a provider would do.
            return Reply(500, self.provider.error_body(
                500, "The script answered a streaming request with a JSON body.")), ""
        sse = reply.raw_sse if reply.raw_sse is not None else (
            self.provider.encode(reply.events, body) if reply.events is not None else "")
        return reply, sse


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply, sse = server._answer(self.path, headers, raw)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.events is not None or reply.raw_sse is not None:
                # Bytes: a binary stream (AWS event stream), of the provider's own type.
                payload = sse if isinstance(sse, bytes) else sse.encode()
                ctype = getattr(server.provider, "stream_type", "text/event-stream")
            else:
                payload = json.dumps(reply.body).encode()
                ctype = "application/json"
            try:
                self.send_response(reply.status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client timed out
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def sse_data(items: Iterable[Any]) -> str:
    """`data: <json>` frames, one per item."""
    return "".join(f"data: {json.dumps(x)}\n\n" for x in items)
