"""A customer is never shown internal error text (issue 39): a real `handoffs serve`
process whose tool fails naming an internal host, whose provider answers 503 and whose
API key is refused (tests/web/failing_team.py), driven through every channel a
customer's token reaches: the session API's JSON answers, a turn streamed as SSE, the
event stream (SSE) and the WebSocket, the transcript, the OpenAI-compatible endpoint
(the `openai` client, plain and streamed), A2A (the a2a-sdk's client) and AG-UI, and the
chat page as Chromium renders it. None of them holds the internal text; the operator's
view of the same sessions (the operator key) holds all of it."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai
import pytest
from websockets.sync.client import connect

from .conftest import OPERATOR_KEY, Served
from .failing_team import INTERNAL, KEY_REFUSED, PROVIDER_FAILS, TOOL_FAILS
from .pages import chat, say, session_of, wait_until

pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")
pytest.importorskip("ag_ui", reason="ag-ui-protocol is not installed (the `agui` extra)")

ASKED = ("Is my warranty still valid?", "provider, please", "key, please")
"""A failing tool, a failing provider, a refused key (each also fails the fallback)."""
SORRY = "Something went wrong on our side; please try again."


@pytest.fixture(scope="module")
def failing() -> Iterator[str]:
    served = Served("tests.web.failing_team:make_runner", "--store", "memory://",
                    "--inspect", "--a2a", "--agui")
    yield served.url
    served.stop()


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def until(lines: Any, *done: str) -> str:
    got: list[str] = []
    for line in lines:
        got.append(line)
        if any(d in line for d in done):
            break
    return "\n".join(got)


def drive_api(url: str, said: list[tuple[str, str]]) -> list[str]:
    """JSON, a streamed turn, the event stream, the WebSocket, the transcript; the
    sessions made."""
    sessions = []
    for text in ASKED:
        made = httpx.post(url + "/v1/sessions", json={}).json()
        sid, token = made["id"], made["token"]
        sessions.append(sid)
        r = httpx.post(f"{url}/v1/sessions/{sid}/messages", json={"text": text},
                       headers=bearer(token), timeout=30)
        said.append((f"json answer to {text!r}", r.text))
        with httpx.stream("POST", f"{url}/v1/sessions/{sid}/messages", timeout=30,
                          json={"text": text},
                          headers={**bearer(token), "Accept": "text/event-stream"}) as s:
            said.append((f"sse turn of {text!r}",
                         until(s.iter_lines(), "event: run_completed", "event: run_failed")))
        ws_url = url.replace("http", "ws") + f"/v1/sessions/{sid}/ws"
        with connect(f"{ws_url}?access_token={token}&after=-1") as ws:
            ws.send(json.dumps({"type": "message", "text": text}))
            frames: list[str] = []
            while sum('"run_completed"' in f or '"run_failed"' in f for f in frames) < 3:
                frames.append(str(ws.recv(15)))
            said.append((f"websocket of {text!r}", "\n".join(frames)))
        with httpx.stream("GET", f"{url}/v1/sessions/{sid}/events?after=-1",
                          headers=bearer(token), timeout=30) as s:
            lines = []
            for line in s.iter_lines():
                lines.append(line)
                if sum(x.startswith("event: run_") and "started" not in x
                       for x in lines) >= 3:
                    break
            said.append((f"event stream of {text!r}", "\n".join(lines)))
        for path in ("", "/transcript"):
            said.append((f"GET {path or 'session'} of {text!r}",
                         httpx.get(f"{url}/v1/sessions/{sid}{path}", headers=bearer(token)).text))
    return sessions


def drive_openai(url: str, said: list[tuple[str, str]]) -> None:
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    for text in ASKED:
        ask = [{"role": "user", "content": text}]
        try:
            got = client.chat.completions.with_raw_response.create(model="team", messages=ask)
            said.append((f"openai answer to {text!r}", got.http_response.text))
        except openai.APIStatusError as exc:
            said.append((f"openai refusal of {text!r}", exc.response.text + str(exc)))
        with httpx.stream("POST", url + "/v1/chat/completions", timeout=30,
                          json={"model": "team", "messages": ask, "stream": True}) as s:
            said.append((f"openai stream of {text!r}", "\n".join(s.iter_lines())))


async def drive_a2a(url: str, said: list[tuple[str, str]]) -> None:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers.proto_helpers import new_text_message
    from a2a.types import Role, SendMessageRequest
    from google.protobuf.json_format import MessageToJson

    for streaming in (True, False):
        async with httpx.AsyncClient(timeout=30) as http:
            client = await create_client(url, ClientConfig(httpx_client=http,
                                                           streaming=streaming))
            for text in ASKED:
                message = new_text_message(text, role=Role.ROLE_USER)
                got = [e async for e in client.send_message(SendMessageRequest(message=message))]
                said.append((f"a2a ({'streamed' if streaming else 'plain'}) {text!r}",
                             "\n".join(MessageToJson(e) for e in got)))


def drive_agui(url: str, said: list[tuple[str, str]]) -> None:
    from ag_ui.core import RunAgentInput, UserMessage

    for n, text in enumerate(ASKED):
        body = RunAgentInput(thread_id=f"agui-{n}", run_id=f"r-{n}", state={}, tools=[],
                             context=[], forwarded_props={},
                             messages=[UserMessage(id="u", content=text)])
        with httpx.stream("POST", url + "/v1/agui", timeout=30,
                          json=body.model_dump(by_alias=True, exclude_none=True)) as s:
            said.append((f"agui {text!r}", "\n".join(s.iter_lines())))


def leaks(said: list[tuple[str, str]]) -> list[str]:
    return [f"{needle!r} in {where}" for where, text in said for needle in INTERNAL
            if needle in text]


def test_no_customer_channel_carries_internal_error_text_and_the_operator_sees_it_all(
        failing: str, context: Any, errors: list[str]) -> None:
    said: list[tuple[str, str]] = []
    sessions = drive_api(failing, said)
    drive_openai(failing, said)
    with ThreadPoolExecutor(1) as pool:  # Playwright's loop runs on this thread
        pool.submit(asyncio.run, drive_a2a(failing, said)).result()
    drive_agui(failing, said)

    # The page: the customer's sentence and Retry, which sends the message again.
    page = chat(context, failing, errors)
    for n, text in enumerate(ASKED, 1):
        say(page, text)
        wait_until(page, f"document.querySelectorAll('.turn .timing').length >= {n}")
    failed = page.locator("#messages .step.failed")
    assert failed.count() == 2
    assert failed.first.locator(".said").inner_text() == SORRY
    failed.first.locator("button.retry").click()
    wait_until(page, "document.querySelectorAll('#messages .step.failed').length === 3")
    said.append(("the page", page.locator("body").inner_text()))
    said.append(("the page's HTML", page.content()))
    sid, token = session_of(page)
    said.append(("the page's session events", httpx.get(
        f"{failing}/v1/sessions/{sid}/transcript", headers=bearer(token)).text))

    # Every channel spoke, and said the customer's sentence.
    assert len(said) == 3 * 6 + 3 * 2 + 3 * 2 + 3 + 3
    assert any(SORRY in text for where, text in said if where.startswith("json"))
    assert any(SORRY in text for where, text in said if where.startswith("openai refusal"))
    assert any(SORRY in text for where, text in said if where.startswith("a2a"))
    assert any(SORRY in text for where, text in said if where.startswith("agui"))
    assert not leaks(said), "\n".join(leaks(said))

    # The operator's view of the same sessions has every detail.
    seen = ""
    for sid in [*sessions, session_of(page)[0]]:
        seen += httpx.get(f"{failing}/v1/sessions/{sid}/transcript",
                          headers=bearer(OPERATOR_KEY)).text
        with httpx.stream("GET", f"{failing}/v1/sessions/{sid}/events?after=-1",
                          headers=bearer(OPERATOR_KEY), timeout=30) as s:
            deadline = time.monotonic() + 10
            for line in s.iter_lines():
                seen += line + "\n"
                if line.startswith("event: run_failed") or time.monotonic() > deadline:
                    break
    for internal in (TOOL_FAILS, PROVIDER_FAILS, KEY_REFUSED):
        assert internal in seen, internal
    assert not errors


def test_a_failed_turn_shows_the_customer_a_sentence_and_retry_at_each_size(
        failing: str, sized: Any, size: str, errors: list[str]) -> None:
    """Issue 43 item 3: the customer sees a sentence and a Retry button (wholly in view,
    large enough to tap), which sends the message again; the details are in the
    inspector, for the operator key."""
    from .pages import assert_accessible, in_view, seen
    from .test_inspector import inspector

    page = chat(sized, failing, errors)
    say(page, "key, please")
    page.wait_for_selector("#messages .step.failed button.retry")
    assert page.locator("#messages .step.failed .said").inner_text() == SORRY
    assert in_view(page, "#messages .step.failed .said")
    assert in_view(page, "#messages .step.failed button.retry")
    assert seen(page, "#messages .step.failed button.retry")["height"] >= 24
    body = page.locator("body").inner_text()
    assert not [x for x in INTERNAL if x in body]
    assert_accessible(page, f"a failed turn with Retry ({size})")
    page.locator("#messages .step.failed button.retry").click()
    wait_until(page, "document.querySelectorAll('#messages .step.failed').length === 2")
    assert in_view(page, "#messages .step.failed button.retry", -1)
    asked = page.locator("#messages .msg.user")
    assert [asked.nth(i).inner_text().strip().splitlines()[-1]
            for i in range(asked.count())] == ["key, please", "key, please"]

    details = inspector(sized, failing, errors, session_of(page)[0])
    wait_until(details, f"document.body.innerText.includes({json.dumps(KEY_REFUSED)})")
    assert not errors
