"""`@ag-ui/client` from the npm registry (its HttpAgent, in Node) drives `handoffs serve
--agui` in a process of its own: the client builds the conversation and the state from
our AG-UI events as any AG-UI front end would. Needs node and `make agui-client`;
skipped without them, except under CI=true, where that is a failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.conftest import SRC, ServeProcess, bearer, handoffs_serve

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE / "node"
CLIENT = NODE_DIR / "node_modules" / "@ag-ui" / "client" / "package.json"

pytest.importorskip("ag_ui", reason="ag-ui-protocol is not installed (the `agui` extra)")


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "no node on PATH"
    if not CLIENT.is_file():
        return "@ag-ui/client is not installed: run `make agui-client` (needs npm)"
    return None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the AG-UI client test cannot run: {reason}")
        pytest.skip(reason)
    with handoffs_serve(["--demo", "--store", "memory://", "--agui"],
                        tmp_path_factory.mktemp("agui")) as s:
        yield s


def drive(url: str, *texts: str) -> dict[str, object]:
    done = subprocess.run(["node", str(NODE_DIR / "drive.mjs"), url, *texts],
                          capture_output=True, text=True, timeout=60, cwd=NODE_DIR)
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout)
    return out


def test_an_agui_client_drives_the_team_across_a_handoff(served: ServeProcess) -> None:
    seen = drive(served.url, "I was charged twice", "thanks, that is all")
    types = seen["types"]
    assert isinstance(types, list)
    assert types.count("RUN_STARTED") == 2 and types.count("RUN_FINISHED") == 2
    assert "RUN_ERROR" not in types
    custom = seen["custom"]
    assert isinstance(custom, list)
    handoff = next(c["value"] for c in custom if c["name"] == "handoff")
    assert (handoff["source"], handoff["target"], handoff["kind"]) == \
        ("triage", "billing", "transfer")
    # The client applied our snapshot and deltas: the active agent moved with the handoff.
    state = seen["state"]
    assert isinstance(state, dict) and state["active_agent"] == "billing"
    assert state["shared"]["handoff_context"]["source_agent"] == "triage"
    # Its conversation: each answer is a message of its own, named after its agent.
    messages = seen["messages"]
    assert isinstance(messages, list)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1]["name"] == "billing" and "order" in messages[1]["content"]
    assert messages[3]["name"] == "billing"  # the second run: billing holds the thread


def test_an_agui_client_cannot_run_on_someone_elses_thread(served: ServeProcess) -> None:
    seen = drive(served.url, "I was charged twice")
    custom = seen["custom"]
    assert isinstance(custom, list)
    session = next(c["value"] for c in custom if c["name"] == "handoffs_session")
    thread, token = session["session_id"], session["token"]
    other = httpx.post(served.url + "/v1/sessions", json={}).json()["token"]

    def transcript() -> list[object]:
        r = httpx.get(f"{served.url}/v1/sessions/{thread}/transcript", headers=bearer(token))
        messages: list[object] = r.json()["messages"]
        return messages

    before = transcript()
    for intruder, (status, code) in ((None, (401, "unauthorized")),
                                     (other, (403, "forbidden"))):
        args = ["node", str(NODE_DIR / "intrude.mjs"), served.url, thread]
        done = subprocess.run(args + ([intruder] if intruder else []), capture_output=True,
                              text=True, timeout=60, cwd=NODE_DIR)
        assert done.returncode == 0, done.stderr
        tried = json.loads(done.stdout)
        assert tried["types"] == []  # not one event of the thread
        assert (tried["status"], tried["error"]["code"]) == (status, code)
        assert token not in done.stdout
    assert transcript() == before


def test_each_agent_is_a_step_and_a_delegate_a_subagent_the_client_keeps_apart(
        served: ServeProcess) -> None:
    seen = drive(served.url, "I was charged twice for order A-1001")
    types = seen["types"]
    assert isinstance(types, list)
    assert types.count("STEP_STARTED") == types.count("STEP_FINISHED") >= 3
    assert types.count("SUBAGENT_STARTED") == types.count("SUBAGENT_FINISHED") == 1
    assert types.index("SUBAGENT_STARTED") < types.index("SUBAGENT_FINISHED")
    messages = seen["messages"]
    assert isinstance(messages, list)
    said = [m for m in messages if m["role"] == "assistant" and m.get("content")]
    policy = [m for m in said if m["name"] == "policy"]
    # The policy desk's answer to billing is the subagent's, not the thread's answer.
    assert policy and all(m.get("subagentRunId") for m in policy)
    assert said[-1]["name"] == "refunds" and not said[-1].get("subagentRunId")


def test_a_user_the_team_lets_decide_answers_the_interrupt_and_the_thread_goes_on(
        tmp_path: Path) -> None:
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the AG-UI client test cannot run: {reason}")
        pytest.skip(reason)
    with handoffs_serve(["protocols.word_team:user_decides", "--store", "memory://",
                         "--agui"], tmp_path,
                        env={"PYTHONPATH": f"{HERE.parent}{os.pathsep}{SRC}"}) as s:
        done = subprocess.run(["node", str(NODE_DIR / "approve.mjs"), s.url],
                              capture_output=True, text=True, timeout=60, cwd=NODE_DIR)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    first, resumed, after = seen["runs"]
    assert first["outcome"] == "interrupt" and first["interrupts"] == ["tool_approval"]
    assert resumed["outcome"] == "success" and resumed["result"]["output"] == "done"
    assert after["outcome"] == "success" and after["result"]["output"] == "noted: thanks"
    assert "refunded A-1" in seen["tools"]


def test_a_frontend_tool_the_agent_calls_is_run_by_the_client_and_the_turn_goes_on(
        tmp_path: Path) -> None:
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the AG-UI client test cannot run: {reason}")
        pytest.skip(reason)
    with handoffs_serve(["protocols.word_team:runner", "--store", "memory://", "--agui"],
                        tmp_path,
                        env={"PYTHONPATH": f"{HERE.parent}{os.pathsep}{SRC}"}) as s:
        done = subprocess.run(["node", str(NODE_DIR / "frontend.mjs"), s.url],
                              capture_output=True, text=True, timeout=60, cwd=NODE_DIR)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    first, second = seen["runs"]
    # The first run ends with the call, for the client to run: no interrupt, no result.
    assert first["outcome"] == "success"
    assert first["result"]["awaiting_tool_results"] == ["c-ask"]
    assert "RUN_ERROR" not in seen["types"]
    assert seen["types"].count("TOOL_CALL_START") == seen["types"].count("TOOL_CALL_END") == 1
    assert "TOOL_CALL_RESULT" not in seen["types"]
    # Its result, sent as the next run's tool message, is what the agent answers with.
    assert second["outcome"] == "success"
    assert second["result"]["output"] == "the user answered: yes (ship it now?)"
    assert "awaiting_tool_results" not in second["result"]
    # The client's conversation: the call and its result once, then the answer.
    assert [(m["role"], m.get("toolCalls"), m.get("toolCallId")) for m in seen["messages"]] \
        == [("user", None, None), ("assistant", ["confirm"], None), ("tool", None, "c-ask"),
            ("assistant", None, None)]
    assert seen["messages"][-1]["content"] == "the user answered: yes (ship it now?)"
