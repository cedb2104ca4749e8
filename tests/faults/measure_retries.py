"""How many times a retried message is stored, per way a client comes to retry it.

    python tests/faults/measure_retries.py

Each scenario runs a real `handoffs serve` (SQLite store, `fault_team.py`) on a real
port, makes one message go wrong on its way, lets the client retry it, and counts the
copies of the message in the stored transcript and the answers to it:

- `openai 502`: the official `openai` client, a proxy answering its first try 502 (the
  turn ran behind it); the client retries by itself;
- `openai failed turn`: the official client on a turn that fails (the server answers
  502 with the turn's code); the client retries twice by itself, each retry must get
  the same failure without storing the message again (`answered` is 0 here: it failed);
- `raw timeout`: raw HTTP with an `Idempotency-Key`, a client timeout shorter than the
  turn, then the same request again;
- `dropped response`: raw HTTP with a key, a proxy that drops the first response (closes
  the connection instead), then the same request again;
- `SIGKILL`: raw HTTP with a key, the server killed after storing the message but
  before answering it, started again on the same store, then the same request again.

It prints `stored` and `answered` per scenario (1 and 1 is right) and whether the client
got the answer. `test_retries.py` asserts the same figures; a checkout without
idempotency keys (whose server ignores the header) shows the duplicates.
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

if __name__ == "__main__":  # run as a script: the tests' helpers are one level up
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from faults.servers import Server, serve
from service.conftest import bearer


@dataclass
class Outcome:
    """One scenario's figures."""

    scenario: str
    stored: int
    """Copies of the message in the stored transcript."""
    answered: int
    """Answers to it in the stored transcript."""
    client_got: str
    """What the client finally got (the answer's text, or its error)."""


class DropFirstProxy:
    """A TCP proxy in front of a server that spoils the first response through it:
    `mode="drop"` closes the client's connection instead of sending it, `mode="502"`
    sends `502 Bad Gateway` instead. The request itself reaches the server, so the turn
    runs; every later response passes unchanged."""

    def __init__(self, upstream: str, mode: str) -> None:
        host, _, port = upstream.removeprefix("http://").partition(":")
        self.target = (host, int(port))
        self.mode = mode
        self.spoiled = False
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.target)
        threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
        try:
            while True:
                head, body = _read_response(upstream)
                if not head:
                    break
                with self._lock:
                    spoil = not self.spoiled
                    self.spoiled = True
                if spoil:
                    if self.mode == "502":
                        client.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n"
                                       b"connection: close\r\n\r\n")
                    break
                client.sendall(head + body)
        except OSError:
            pass
        finally:
            for s in (client, upstream):
                with suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass


def _read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    """One HTTP/1.1 response with a content-length (the server's JSON answers)."""
    head = b""
    while b"\r\n\r\n" not in head:
        data = sock.recv(65536)
        if not data:
            return b"", b""
        head += data
    head, _, body = head.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        data = sock.recv(65536)
        if not data:
            break
        body += data
    return head + b"\r\n\r\n", body


@contextmanager
def proxied(server: Server, mode: str) -> Iterator[DropFirstProxy]:
    proxy = DropFirstProxy(server.url, mode)
    try:
        yield proxy
    finally:
        proxy.close()


def count(server: Server, sid: str, text: str) -> tuple[int, int]:
    """Copies of `text` stored as user messages, and answers to it."""
    messages = server.export(sid)["messages"]
    stored = sum(1 for m in messages if m["kind"] == "user" and m["text"] == text)
    answered = sum(1 for m in messages
                   if m["kind"] == "assistant" and m["text"] == f"answer to {text}")
    return stored, answered


def openai_502(server: Server) -> Outcome:
    import openai

    sid, token = server.session()
    text = "slow 0.2 openai"
    with proxied(server, "502") as proxy:
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key=token,
                               default_headers={"X-Handoffs-Session": sid}, timeout=30)
        try:
            got = client.chat.completions.create(
                model="team", messages=[{"role": "user", "content": text}])
            answer = got.choices[0].message.content or ""
        except openai.APIError as exc:
            answer = f"error: {exc}"
    return Outcome("openai 502", *count(server, sid, text), answer)


def openai_failed_turn(server: Server) -> Outcome:
    import openai

    sid, token = server.session()
    text = "fail openai"
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=token,
                           default_headers={"X-Handoffs-Session": sid}, timeout=30)
    try:
        client.chat.completions.create(model="team",
                                       messages=[{"role": "user", "content": text}])
        answer = "an answer"
    except openai.APIStatusError as exc:
        answer = f"error {exc.status_code}"
    return Outcome("openai failed turn", *count(server, sid, text), answer)


def raw_timeout(server: Server) -> Outcome:
    sid, token = server.session()
    text = "slow 1.5 timeout"
    key = {"Idempotency-Key": str(uuid.uuid4())}
    try:
        r = server.say(sid, token, text, timeout=0.5, **key)
        answer = r.json().get("output", r.text)
    except httpx.TimeoutException:
        r = server.say(sid, token, text, timeout=30, **key)
        answer = r.json().get("output", r.text)
    return Outcome("raw timeout", *count(server, sid, text), answer)


def dropped_response(server: Server) -> Outcome:
    sid, token = server.session()
    text = "slow 0.2 dropped"
    key = {"Idempotency-Key": str(uuid.uuid4())}
    with proxied(server, "drop") as proxy:
        url = f"{proxy.url}/v1/sessions/{sid}/messages"
        for _ in range(2):
            try:
                r = httpx.post(url, json={"text": text}, timeout=30,
                               headers={**bearer(token), **key})
                answer = r.json().get("output", r.text)
                break
            except httpx.TransportError as exc:
                answer = f"error: {type(exc).__name__}"
    return Outcome("dropped response", *count(server, sid, text), answer)


def sigkill(store: str, cwd: Path) -> Outcome:
    text = "slow 3 killed"
    key = {"Idempotency-Key": str(uuid.uuid4())}
    with serve(store, cwd) as first:
        sid, token = first.session()
        sent = threading.Thread(target=_quietly, args=(first, sid, token, text, key))
        sent.start()
        time.sleep(1.0)  # the message is stored (its first commit), the answer is not
        first.kill()
        sent.join()
    with serve(store, cwd) as again:
        r = again.say(sid, token, text, timeout=30, **key)
        answer = r.json().get("output", r.text)
        return Outcome("SIGKILL", *count(again, sid, text), answer)


def _quietly(server: Server, sid: str, token: str, text: str, key: dict[str, str]) -> None:
    with suppress(httpx.HTTPError):
        server.say(sid, token, text, timeout=30, **key)


def measure(cwd: Path) -> list[Outcome]:
    """Every scenario, each on its own SQLite store under `cwd`."""
    found = []
    for name, scenario in (("openai", openai_502), ("failed", openai_failed_turn),
                           ("timeout", raw_timeout),
                           ("dropped", dropped_response)):
        with serve(f"sqlite:///{cwd / (name + '.db')}", cwd) as server:
            found.append(scenario(server))
    found.append(sigkill(f"sqlite:///{cwd / 'killed.db'}", cwd))
    return found


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = measure(Path(tmp))
    print(f"{'scenario':<18} {'stored':>6} {'answered':>8}  client got")
    for o in outcomes:
        print(f"{o.scenario:<18} {o.stored:>6} {o.answered:>8}  {o.client_got[:60]}")


if __name__ == "__main__":
    main()
