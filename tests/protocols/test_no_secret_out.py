"""Nothing secret in anything a server says (issue 45). One real server process with every
face on (secrets_server.py) is driven through every output channel with session tokens
and the operator key: HTTP JSON answers, SSE streams, the WebSocket, A2A JSON-RPC plain
and streamed (the a2a-sdk's own client), AG-UI streams, the OpenAI-compatible endpoint
(the `openai` client), the page and the API documents, and refusals of each. Then
everything it said is searched for them, with its log (every logger at DEBUG) and its
OpenTelemetry spans (the global provider's in-memory exporter: the team's, the
a2a-sdk's and FastAPI's own). A session's token may appear in the one answer that gives
it to the client that started the session, and nowhere else; the operator key nowhere."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from service.conftest import SRC, free_port

pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")
pytest.importorskip("ag_ui", reason="ag-ui-protocol is not installed (the `agui` extra)")

from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_text_message
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from a2a.utils.errors import A2AError
from google.protobuf.json_format import MessageToJson
from websockets.sync.client import connect

SERVER = Path(__file__).with_name("secrets_server.py")
STATIC = SRC / "handoffs" / "server" / "static"
TOKEN_FIELD = "handoffs_session_token"


@dataclass
class Said:
    """Everything the server said, each piece with where it came from, and the one
    answer that gives each token."""

    pieces: list[tuple[str, str]] = field(default_factory=list)
    given: dict[str, str] = field(default_factory=dict)

    def add(self, where: str, text: str) -> str:
        self.pieces.append((where, text))
        return text

    def answer(self, where: str, r: httpx.Response) -> httpx.Response:
        self.add(f"{where} ({r.status_code})", r.text + json.dumps(dict(r.headers)))
        return r

    def give(self, where: str, token: str) -> str:
        assert token and token not in self.given
        self.given[token] = where
        return token


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    out: Path

    def stop(self) -> tuple[str, list[dict[str, Any]]]:
        """Stop it; what it logged and the spans it made."""
        self.proc.terminate()
        self.proc.wait(20)
        log = (self.out / "server.log").read_text(encoding="utf-8", errors="replace")
        spans = [json.loads(line) for line in
                 (self.out / "spans.jsonl").read_text(encoding="utf-8").splitlines()]
        return log, spans


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Server, str]]:
    key = "op-" + secrets.token_urlsafe(24)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(SRC), "SECRETS_SERVER_OPERATOR_KEY": key}
    with open(tmp_path / "server.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, str(SERVER), str(port), str(tmp_path)],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    s = Server(f"http://127.0.0.1:{port}", proc, tmp_path)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(s.url + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((tmp_path / "server.log").read_text())
            time.sleep(0.1)
        yield s, key
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def until(lines: Iterator[str], done: str, count: int = 1) -> str:
    """Lines of a stream up to the `count`-th one holding `done`."""
    got: list[str] = []
    for line in lines:
        got.append(line)
        if done in line:
            count -= 1
            if count == 0:
                break
    return "\n".join(got)


def drive_http(s: Server, key: str, said: Said) -> tuple[str, str]:
    """Sessions, messages (JSON and SSE), events (SSE and WebSocket, the secret in the
    URL as EventSource and browsers send it), operator routes, time travel, the page,
    the documents and refusals. The session made and its token."""
    url = s.url
    created = httpx.post(url + "/v1/sessions", json={})
    sid = created.json()["id"]
    token = said.give("http: POST /v1/sessions", created.json()["token"])
    said.add("http: POST /v1/sessions", created.text)
    said.answer("http: message", httpx.post(f"{url}/v1/sessions/{sid}/messages",
                                            json={"text": "I was charged twice"},
                                            headers=bearer(token), timeout=30))
    with httpx.stream("POST", f"{url}/v1/sessions/{sid}/messages", timeout=30,
                      json={"text": "It is order A-1001"},
                      headers={**bearer(token), "Accept": "text/event-stream"}) as r:
        said.add("http: message as SSE", until(r.iter_lines(), "run_completed"))
    for secret in (token, key):
        with httpx.stream("GET", f"{url}/v1/sessions/{sid}/events?access_token={secret}"
                          "&after=-1", timeout=30) as r:
            said.add("sse: events", until(r.iter_lines(), "run_completed", 2))
        for path in ("", "/transcript"):
            said.answer("http: read", httpx.get(f"{url}/v1/sessions/{sid}{path}",
                                                headers=bearer(secret)))
    ws_url = url.replace("http", "ws") + f"/v1/sessions/{sid}/ws"
    with connect(f"{ws_url}?access_token={token}&after=-1") as ws:
        ws.send(json.dumps({"type": "message", "text": "thanks"}))
        frames = []
        while len([f for f in frames if '"run_completed"' in f]) < 3:
            frames.append(str(ws.recv(10)))
        said.add("websocket: events", "\n".join(frames))
    with connect(f"{ws_url}?access_token={key}") as ws:
        ws.send(json.dumps({"type": "select_agent", "agent": "technical"}))
        frames = []
        while '"agent_selected"' not in (frames[-1] if frames else ""):
            frames.append(str(ws.recv(10)))
        said.add("websocket: operator", "\n".join(frames))
    for secret in ("wrong-" + token, "wrong-" + key):
        with connect(f"{ws_url}?access_token={secret}") as ws:
            said.add("websocket: refused", str(ws.recv(10)))
    for where, r in (
            ("operator: sessions", httpx.get(url + "/v1/sessions", headers=bearer(key))),
            ("operator: export", httpx.get(f"{url}/v1/sessions/{sid}/export",
                                           headers=bearer(key))),
            ("operator: approvals", httpx.get(f"{url}/v1/sessions/{sid}/approvals",
                                              headers=bearer(key))),
            ("operator: state", httpx.get(f"{url}/v1/sessions/{sid}/state",
                                          headers=bearer(key))),
            ("operator: fork", httpx.post(f"{url}/v1/sessions/{sid}/fork", json={"turn": 2},
                                          headers=bearer(key))),
            ("refused: no token", httpx.get(f"{url}/v1/sessions/{sid}")),
            ("refused: wrong token", httpx.get(f"{url}/v1/sessions/{sid}",
                                               headers=bearer("wrong-" + token))),
            ("refused: no session", httpx.get(f"{url}/v1/sessions/nobody",
                                              headers=bearer(token))),
            ("refused: operator route", httpx.get(url + "/v1/sessions",
                                                  headers=bearer(token))),
            ("refused: chosen id", httpx.post(url + "/v1/sessions", json={"id": "mine"},
                                              headers=bearer(token))),
            ("refused: bad body", httpx.post(f"{url}/v1/sessions/{sid}/messages",
                                             json={"text": 1}, headers=bearer(token)))):
        said.answer(where, r)
    for path in ("/", "/operator", "/inspect", "/v1/config", "/v1/team", "/openapi.json",
                 "/docs", "/healthz", "/readyz", "/metrics", "/.well-known/agent-card.json",
                 *(f"/static/{p.relative_to(STATIC)}" for p in STATIC.rglob("*")
                   if p.is_file())):
        said.answer(f"page: {path}", httpx.get(url + path, headers=bearer(token)))
    return sid, token


async def drive_a2a(s: Server, key: str, said: Said) -> None:
    """New conversations (streamed and not), messages into them, their tasks read,
    listed, followed and cancelled, by their owners, the operator and strangers."""

    async def client(secret: str | None, streaming: bool = True) -> Any:
        http = httpx.AsyncClient(headers=bearer(secret) if secret else {}, timeout=30)
        return http, await create_client(s.url, ClientConfig(httpx_client=http,
                                                             streaming=streaming))

    async def send(c: Any, text: str, **ids: str) -> list[Any]:
        message = new_text_message(text, role=Role.ROLE_USER, **ids)
        return [e async for e in c.send_message(SendMessageRequest(message=message))]

    async def tried(where: str, call: Any) -> None:
        try:
            got = await call
            said.add(where, MessageToJson(got) if got is not None else "")
        except A2AError as exc:
            said.add(where + " (refused)", f"{type(exc).__name__}: {exc.message}")

    http, anon = await client(None)
    first = await send(anon, "The app crashes when I open it")
    task = first[0].task
    token = said.give("a2a: the first task of a new conversation", task.metadata[TOKEN_FIELD])
    said.add("a2a: the first task of a new conversation", MessageToJson(first[0]))
    said.add("a2a: the rest of that answer", "\n".join(MessageToJson(e) for e in first[1:]))
    plain_http, plain = await client(None, streaming=False)
    answered = (await send(plain, "hello"))[0].task
    said.give("a2a: the answer (SendMessage) of a new conversation",
              answered.metadata[TOKEN_FIELD])
    said.add("a2a: the answer (SendMessage) of a new conversation", MessageToJson(answered))
    own_http, own = await client(token)
    held = await send(own, "Still broken. Can a person look at my account?",
                      context_id=task.context_id)
    said.add("a2a: a message with the token", "\n".join(MessageToJson(e) for e in held))
    waiting = held[0].task.id
    op_http, op = await client(key)
    for who, c in (("owner", own), ("operator", op), ("anonymous", anon)):
        await tried(f"a2a: GetTask by the {who}", c.get_task(GetTaskRequest(id=waiting)))
        await tried(f"a2a: ListTasks by the {who}", c.list_tasks(ListTasksRequest(
            page_size=100, include_artifacts=True)))
        await tried(f"a2a: CancelTask of a completed task by the {who}",
                    c.cancel_task(CancelTaskRequest(id=task.id)))

        async def followed(c: Any = c) -> Any:
            async with asyncio.timeout(5):
                async for event in c.subscribe(SubscribeToTaskRequest(id=waiting)):
                    return event
            return None

        await tried(f"a2a: SubscribeToTask by the {who}", followed())
    try:
        await send(anon, "let me in", context_id=task.context_id)
    except A2AError as exc:
        said.add("a2a: a message into another's conversation (refused)", exc.message)
    said.add("a2a: the operator's message", "\n".join(
        MessageToJson(e) for e in await send(op, "hello from the desk",
                                             context_id=answered.context_id)))
    for h in (http, plain_http, own_http, op_http):
        await h.aclose()


def drive_agui(s: Server, key: str, said: Said) -> None:
    """A new thread (its token in a CUSTOM event), a run that waits for the operator's
    approval (decided over HTTP), an operator's resume, a run with the token, refused
    runs."""
    from ag_ui.core import RunAgentInput, UserMessage

    def run(thread: str, text: str | None, secret: str | None,
            resume: list[dict[str, Any]] | None = None) -> list[str]:
        body = RunAgentInput(thread_id=thread, run_id=f"r-{time.monotonic_ns()}", state={},
                             tools=[], context=[], forwarded_props={},
                             messages=[UserMessage(id="u", content=text)] if text else [])
        data = body.model_dump(by_alias=True, exclude_none=True)
        if resume:
            data["resume"] = resume
        with httpx.stream("POST", s.url + "/v1/agui", json=data, timeout=30,
                          headers=bearer(secret) if secret else {}) as r:
            return [line for line in r.iter_lines() if line] or [f"{r.status_code}"]

    # The refund over $500 waits for the operator: the user's run stays open (no
    # interrupt it could not answer) until the operator decides over HTTP.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(run, "agui-thread",
                              "I want a refund for order A-1003, I was charged twice", None)
        deadline = time.monotonic() + 30
        while True:
            r = httpx.get(s.url + "/v1/sessions/agui-thread/approvals", headers=bearer(key))
            if r.status_code == 200 and r.json()["approvals"]:
                break
            assert time.monotonic() < deadline, r.text
            time.sleep(0.05)
        for c in r.json()["approvals"]:
            decided = httpx.post(f"{s.url}/v1/sessions/agui-thread/approvals/{c['call_id']}",
                                 json={"approved": True}, headers=bearer(key))
            said.add("agui: the operator's decision", decided.text)
        first = waiting.result(timeout=30)
    custom = [line for line in first if '"handoffs_session"' in line]
    assert len(custom) == 1, first
    token = json.loads(custom[0].removeprefix("data: "))["value"]["token"]
    said.give("agui: the new thread's handoffs_session event", token)
    said.add("agui: the new thread's handoffs_session event", custom[0])
    said.add("agui: the rest of that run", "\n".join(x for x in first if x != custom[0]))
    assert any('"handoffs_waiting"' in line for line in first), first
    # An interrupt the operator resumes: the operator's own run, on a call that waits.
    said.add("agui: the operator's resume (nothing waits now)", "\n".join(run(
        "agui-thread", None, key, resume=[
            {"interruptId": "none", "status": "resolved", "payload": {"approved": True}}])))
    said.add("agui: a run with the token", "\n".join(run("agui-thread", "thanks", token)))
    for secret in (None, "wrong-" + token):
        r = httpx.post(s.url + "/v1/agui", headers=bearer(secret) if secret else {},
                       json={"threadId": "agui-thread", "runId": "r", "messages": [
                           {"id": "u", "role": "user", "content": "hi"}]})
        said.answer("agui: refused", r)


def drive_openai(s: Server, key: str, sid: str, token: str, said: Said) -> None:
    """Completions in a session (plain and streamed), kept throw-away sessions (their
    token in the answer's `handoffs`), the models, refusals."""
    base = s.url + "/v1"
    ask = [{"role": "user", "content": "Still broken. Can a person look at my account?"}]
    plain = openai.OpenAI(base_url=base, api_key="unused")
    kept = plain.chat.completions.with_raw_response.create(model="team", messages=ask)
    kept_token = kept.parse().model_extra["handoffs"]["token"]  # type: ignore[index]
    said.give("openai: a kept throw-away's answer", kept_token)
    said.add("openai: a kept throw-away's answer", kept.http_response.text)
    with httpx.stream("POST", base + "/chat/completions", timeout=30,
                      json={"model": "team", "messages": ask, "stream": True}) as r:
        chunks = list(r.iter_lines())
    last = next(json.loads(c.removeprefix("data: ")) for c in reversed(chunks)
                if c.startswith("data: {"))
    said.give("openai: a kept throw-away's stream", last["handoffs"]["token"])
    said.add("openai: a kept throw-away's stream", "\n".join(chunks))
    said.add("openai: models", plain.models.with_raw_response.list().http_response.text)
    for secret in (token, key):
        client = openai.OpenAI(base_url=base, api_key=secret,
                               default_headers={"X-Handoffs-Session": sid})
        said.add("openai: a completion in a session",
                 client.chat.completions.with_raw_response.create(
                     model="team", messages=[{"role": "user", "content": "hi"}]
                 ).http_response.text)
        with httpx.stream("POST", base + "/chat/completions", timeout=30,
                          headers={**bearer(secret), "X-Handoffs-Session": sid},
                          json={"model": "team", "stream": True,
                                "messages": [{"role": "user", "content": "again"}]}) as r:
            said.add("openai: a streamed completion in a session",
                     "\n".join(r.iter_lines()))
    for headers in ({"X-Handoffs-Session": sid}, {**bearer("wrong-" + token),
                                                  "X-Handoffs-Session": sid}):
        said.answer("openai: refused", httpx.post(base + "/chat/completions", headers=headers,
                                                  json={"model": "team", "messages": ask}))


def test_no_token_and_no_operator_key_in_anything_the_server_says(
        server: tuple[Server, str]) -> None:
    s, key = server
    said = Said()
    sid, token = drive_http(s, key, said)
    asyncio.run(drive_a2a(s, key, said))
    drive_agui(s, key, said)
    drive_openai(s, key, sid, token, said)
    log, spans = s.stop()
    said.add("the server's log", log)
    for span in spans:
        said.add(f"span {span['name']}", json.dumps(span, default=str))

    # What was searched is really there: every channel spoke.
    assert len(said.given) == 6
    assert '"GET /v1/sessions/' in log  # uvicorn's access lines
    assert "DEBUG a2a." in log and "INFO handoffs." in log
    names = {span["name"] for span in spans}
    assert any(n.startswith("a2a.") for n in names)  # the a2a-sdk's own spans
    assert any(n.startswith("invoke_agent") for n in names)  # the team's turns
    assert any("/v1/sessions/{session_id}/events" in n for n in names)  # FastAPI's

    leaks = []
    for where, text in said.pieces:
        if key in text:
            leaks.append(f"the operator key in {where}")
        for token, given in said.given.items():
            if token in text and where != given:
                leaks.append(f"the token given by {given!r} in {where}")
    assert not leaks, "\n".join(sorted(set(leaks)))
    for token, given in said.given.items():  # and each was in the answer that gives it
        assert any(token in text for where, text in said.pieces if where == given), given
