"""`run_eval` on a model string, against an OpenAI-compatible server on a real port (the
official SDK on the wire): prompt bytes are the bodies the server received, tokens are
the usage it reported."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handoffs.eval import parse_jsonl, run_eval
from wire.openai_api import completion, tool_call
from wire.server import FakeServer, Reply

from .teams import build_team

pytest.importorskip("openai")


def routing_server(body: Any) -> Reply:
    """Routes like a model would: prices to sales, the rest answered by whoever asks."""
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "price" in user and "transfer_to_sales" in tools:
        return completion(calls=[tool_call("call_1", "transfer_to_sales",
                                           {"reason": "a price"})], usage=(40, 7))
    return completion("Here to help.", usage=(30, 4))


async def test_bytes_and_tokens_are_what_the_server_received_and_reported(
        openai_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    openai_server.add(*[routing_server] * 6)
    cases = parse_jsonl('{"id": "p", "user": "price of the dock?", "agent": "sales"}\n'
                        '{"id": "h", "user": "hello", "agent": "front"}\n')

    report = await run_eval(build_team(), cases, model="openai:gpt-test?max_retries=0",
                            concurrency=1)
    run = report.run

    assert run.model == "openai:gpt-test?max_retries=0"
    assert run.accuracy == 1.0 and openai_server.rejections == []
    calls = [c for t in run.turns for c in t.calls]
    bodies = openai_server.bodies
    assert len(calls) == len(bodies) == 3
    for call, body in zip(calls, bodies, strict=True):
        sent = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        assert call.prompt_bytes == len(json.dumps(sent, ensure_ascii=False,
                                                   separators=(",", ":")).encode())
    totals = run.totals()
    assert (totals["input_tokens"], totals["output_tokens"]) == (40 + 30 + 30, 7 + 4 + 4)
    assert totals["max_request_bytes"] == max(c.prompt_bytes for c in calls)
