"""The traffic benchmark's server records what it receives, and our driver's run is checked."""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "traffic"))

import driver
import run
import scenario
import server as traffic_server
from server import TrafficServer

pytest.importorskip("openai")


def post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url + "/chat/completions", data=data,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def triage_request(turn: int = 0, **extra: Any) -> dict[str, Any]:
    tools = [{"type": "function", "function": {
        "name": f"transfer_to_{t}", "description": t,
        "parameters": {"type": "object", "properties": {"reason": {"type": "string"}}}}}
        for t in ("billing", "shipping")]
    return {"model": scenario.MODEL, "tools": tools, **extra, "messages": [
        {"role": "system", "content": scenario.AGENT["triage"].instructions},
        {"role": "user", "content": scenario.USER[turn]}]}


def test_server_records_every_request_and_answers_from_the_script() -> None:
    with TrafficServer(max_requests=10, max_seconds=30) as s:
        assert s.base_url(3).startswith("http://127.0.0.1:")
        body = triage_request()
        status, raw = post(s.base_url(3), body)
        assert status == 200
        reply = json.loads(raw)
        call = reply["choices"][0]["message"]["tool_calls"][0]["function"]
        assert call["name"] == "transfer_to_billing"
        assert json.loads(call["arguments"]) == {"reason": scenario.REASON}
        status, raw = post(s.base_url(4), triage_request(2, stream=True))
        assert status == 200 and raw.decode().endswith("data: [DONE]\n\n")
        assert "transfer_to_shipping" in raw.decode()
    first, second = s.records
    assert (first["conversation"], first["agent"], first["turn"], first["decision"]) == \
        (3, "triage", 0, "handoff")
    assert first["bytes"] == len(json.dumps(body).encode())
    assert first["body"] == body and first["tools"] == 2
    assert (second["conversation"], second["turn"], second["stream"]) == (4, 2, True)
    assert s.errors == [] and s.stopped_because == "stopped"


def test_server_is_bounded_in_requests_and_in_time() -> None:
    s = TrafficServer(max_requests=1, max_seconds=30).start()
    assert post(s.base_url(0), triage_request())[0] == 200
    assert post(s.base_url(0), triage_request())[0] == 503
    wait_until_stopped(s)
    assert s.stopped_because == "request limit (1)"
    s.stop()

    t = TrafficServer(max_requests=10, max_seconds=0.2).start()
    wait_until_stopped(t)
    assert t.stopped_because == "time limit (0.2 s)"
    t.stop()


def wait_until_stopped(s: TrafficServer) -> None:
    deadline = time.monotonic() + 10
    while not s._stopped and time.monotonic() < deadline:
        time.sleep(0.01)
    assert s._stopped, "the server did not stop by itself"


def test_unscripted_requests_are_counted() -> None:
    with TrafficServer(max_requests=10, max_seconds=30) as s:
        body = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
        status, raw = post(s.base_url(0), body)
        assert status == 200
        assert json.loads(raw)["choices"][0]["message"]["content"] == scenario.UNSCRIPTED
        assert post(s.base_url(0).replace("/c0/", "/x/"), body)[0] == 404
    assert s.records[0]["decision"] == "unscripted"
    assert len(s.errors) == 2


def test_one_handoff_tool_with_an_agent_name_and_the_source_asked_again() -> None:
    # Strands' handoff_to_agent (and ADK's transfer_to_agent): one tool, an agent_name argument.
    tool = {"type": "function", "function": {"name": "handoff_to_agent", "parameters": {
        "type": "object", "required": ["agent_name", "message"],
        "properties": {"agent_name": {"type": "string"}, "message": {"type": "string"},
                       "context": {"type": "object"}}}}}
    body = {"messages": [{"role": "system", "content": scenario.AGENT["triage"].instructions},
                         {"role": "user", "content": f"Context: User Request: {scenario.USER[4]}"}],
            "tools": [tool]}
    d = scenario.decide(body)
    assert (d.agent, d.turn, d.kind, d.call_name) == ("triage", 4, "handoff", "handoff_to_agent")
    assert json.loads(d.call_arguments) == {"agent_name": "shipping", "message": scenario.REASON}
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": d.call_name, "arguments": d.call_arguments}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "handed off"}]
    assert scenario.decide(body).kind == "handed_off"


def args_for(url: str, view: str = "own_tools", reps: int = 1) -> argparse.Namespace:
    return argparse.Namespace(base_url=url, reps=reps, view=view)


async def test_our_driver_plays_the_conversation_and_checks_every_turn() -> None:
    import drive_handoffs

    with TrafficServer(max_requests=100, max_seconds=60) as s:
        args = args_for(f"http://127.0.0.1:{s.port}/c{{conv}}/v1")
        out = await driver.play(drive_handoffs.HandoffsDriver(args), args)
    assert [t["agent"] for t in out["turns"]] == list(scenario.ANSWERED_BY)
    assert s.errors == []
    kinds = [r["decision"] for r in s.records]
    assert len(kinds) == 11 and kinds.count("handoff") == 3 and kinds.count("tool") == 2


async def test_a_wrong_answer_fails_our_drivers_check(monkeypatch: pytest.MonkeyPatch) -> None:
    import drive_handoffs

    real = scenario.decide

    def off_script(body: dict[str, Any]) -> scenario.Decision:
        d = real(body)
        if d.kind == "answer" and d.turn == 1:
            d.text = "Something else."
        return d

    monkeypatch.setattr(traffic_server.scenario, "decide", off_script)
    with TrafficServer(max_requests=100, max_seconds=60) as s:
        args = args_for(f"http://127.0.0.1:{s.port}/c{{conv}}/v1")
        with pytest.raises(driver.CheckFailed, match=r"turn 2: answer 'Something else\.'"):
            await driver.play(drive_handoffs.HandoffsDriver(args), args)


def test_run_py_runs_our_row_in_a_subprocess_and_reports_it(tmp_path: Path) -> None:
    out = tmp_path / "traffic.json"
    rc = run.main(["--only", "handoffs:last_user", "--rounds", "1", "--reps", "2",
                   "--no-tokens", "--json", str(out), "--timeout", "120"])
    assert rc == 0
    res = json.loads(out.read_text())
    (r,) = res["runs"]
    assert r["status"] == "ok" and r["driver"]["view"] == "last_user"
    assert [c["calls"] for c in r["conversations"]] == [11, 11]
    s = res["summary"]["handoffs:last_user"]
    assert s["calls"] == 11 and s["handoffs"] == 3 and s["turn_s"]["median"] > 0
    assert (tmp_path / "traffic-requests.json.gz").exists()
