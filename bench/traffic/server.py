"""A local OpenAI Chat Completions server that plays the traffic scenario and records requests.

    server = TrafficServer(max_requests=500, max_seconds=300).start()
    url = server.base_url(conversation=0)      # http://127.0.0.1:<port>/c0/v1
    ...                                        # point a framework's OpenAI client at url
    server.stop()
    server.records                              # every request, in arrival order

    python bench/traffic/server.py --max-seconds 60   # by hand: prints the URL, serves, stops

Stdlib only. It binds 127.0.0.1 on an ephemeral port, answers ``POST
/c<N>/v1/chat/completions`` (``N`` names the conversation, so one server can tell a driver's
conversations apart without touching the request body), JSON or SSE (``"stream": true``), with
the reply :func:`scenario.decide` picks from the request. It is bounded: after
``max_requests`` requests it answers 503 and shuts down, and it shuts down by itself
``max_seconds`` after it started, whatever happens.

Each record keeps the raw body's size, the parsed body, the decision and a breakdown of the
body's parts (:func:`scenario.facts`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario

PATH = re.compile(r"^/c(\d+)(?:/v1)?/chat/completions/?(?:\?.*)?$")


class TrafficServer:
    """The scripted Chat Completions server (see the module docstring)."""

    def __init__(self, max_requests: int = 2000, max_seconds: float = 600.0) -> None:
        self.max_requests = max_requests
        self.max_seconds = max_seconds
        self.records: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.stopped_because: str | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True, name="traffic-server")
        self._timer = threading.Timer(max_seconds, self._expire)
        self._timer.daemon = True
        self._stopping = threading.Lock()
        self._stopped = False

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def base_url(self, conversation: int = 0) -> str:
        return f"http://127.0.0.1:{self.port}/c{conversation}/v1"

    def start(self) -> TrafficServer:
        self._thread.start()
        self._timer.start()
        return self

    def stop(self, because: str = "stopped") -> None:
        with self._stopping:
            if self._stopped:
                return
            self._stopped = True
            self.stopped_because = self.stopped_because or because
        self._timer.cancel()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> TrafficServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _expire(self) -> None:
        self.stopped_because = f"time limit ({self.max_seconds:g} s)"
        self.errors.append(self.stopped_because)
        threading.Thread(target=self.stop, daemon=True).start()

    # -- answering -----------------------------------------------------------------------------

    def answer(self, path: str, raw: bytes) -> tuple[int, dict[str, Any] | list[Any]]:
        """(status, JSON body or list of SSE chunks) for one request; records it."""
        match = PATH.match(path)
        with self._lock:
            n = next(self._ids)
            if n > self.max_requests:
                if n == self.max_requests + 1:
                    self.stopped_because = f"request limit ({self.max_requests})"
                    self.errors.append(self.stopped_because)
                    threading.Thread(target=self.stop, daemon=True).start()
                return 503, _error("The traffic server's request limit was reached.")
        if match is None:
            with self._lock:
                self.errors.append(f"unexpected path {path}")
            return 404, _error(f"No route {path}.")
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            with self._lock:
                self.errors.append(f"bad JSON body: {exc}")
            return 400, _error("We could not parse the JSON body of your request.")
        decision = scenario.decide(body)
        record = {
            "n": n, "conversation": int(match.group(1)), "at": time.monotonic(),
            "agent": decision.agent, "turn": decision.turn, "decision": decision.kind,
            "why": decision.why, **scenario.facts(body, raw), "body": body,
        }
        with self._lock:
            self.records.append(record)
            if decision.kind == "unscripted":
                self.errors.append(f"unscripted request {n}: {decision.why}")
        return 200, _reply(n, body, decision, len(raw))


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None,
                      "code": None}}


def _reply(n: int, body: dict[str, Any], d: scenario.Decision,
           size: int) -> dict[str, Any] | list[Any]:
    model = body.get("model") or scenario.MODEL
    created = 1_700_000_000 + n
    cid = f"chatcmpl-{n:020d}"
    completion = max(1, len(d.text or d.call_arguments) // 4)
    usage = {"prompt_tokens": size // 4, "completion_tokens": completion,
             "total_tokens": size // 4 + completion}
    call = None
    if d.call_name:
        call = {"id": f"call_{n:024d}", "type": "function",
                "function": {"name": d.call_name, "arguments": d.call_arguments}}
    finish = "tool_calls" if call else "stop"
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": None if call else d.text,
                                   "refusal": None}
        if call:
            message["tool_calls"] = [call]
        return {"id": cid, "object": "chat.completion", "created": created, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish,
                             "logprobs": None}],
                "usage": usage, "system_fingerprint": None}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason,
                             "logprobs": None}]}

    if call:
        chunks = [chunk({"role": "assistant", "content": None, "tool_calls": [
                      {"index": 0, "id": call["id"], "type": "function",
                       "function": {"name": call["function"]["name"], "arguments": ""}}]}),
                  chunk({"tool_calls": [{"index": 0, "function": {
                      "arguments": call["function"]["arguments"]}}]})]
    else:
        chunks = [chunk({"role": "assistant", "content": ""}), chunk({"content": d.text})]
    chunks.append(chunk({}, finish))
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({"id": cid, "object": "chat.completion.chunk", "created": created,
                       "model": model, "choices": [], "usage": usage})
    return chunks


def _handler(server: TrafficServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body are two writes: without TCP_NODELAY the second waits for the
        # client's delayed ACK (40 ms on Linux), which would be billed to every framework.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            status, out = server.answer(self.path, raw)
            if isinstance(out, list):
                payload = "".join(f"data: {json.dumps(c)}\n\n" for c in out) + "data: [DONE]\n\n"
                data, ctype = payload.encode(), "text/event-stream"
            else:
                data, ctype = json.dumps(out).encode(), "application/json"
            try:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self) -> None:
            data = json.dumps(_error(f"No route {self.path}.")).encode()
            with server._lock:
                server.errors.append(f"unexpected GET {self.path}")
            self.send_response(404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Serve the traffic scenario on 127.0.0.1 for a "
                                "while, then print a summary of what was received.")
    p.add_argument("--max-requests", type=int, default=500)
    p.add_argument("--max-seconds", type=float, default=60.0)
    args = p.parse_args(argv)
    server = TrafficServer(args.max_requests, args.max_seconds).start()
    print(f"serving {server.base_url(0)} (any /c<N>/v1) for at most {args.max_seconds:g} s "
          f"or {args.max_requests} requests", flush=True)
    try:
        server._thread.join()
    except KeyboardInterrupt:
        server.stop("interrupted")
    print(json.dumps({"requests": len(server.records), "errors": server.errors,
                      "stopped_because": server.stopped_because}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
