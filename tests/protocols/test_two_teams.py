"""Two teams of ours talking A2A: a local desk hands the customer to a team served with
`handoffs serve --a2a` in a process of its own, which answers as a remote agent; the
served side's session token, given with the first task, opens its next messages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from handoffs import Agent, RemoteAgent, Runner, RunStatus, Team
from handoffs.testing import ScriptedModel, transfer
from service.conftest import OPERATOR_KEY, ServeProcess, handoffs_serve

pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    cwd: Path = tmp_path_factory.mktemp("two")
    with handoffs_serve(["--demo", "--store", "memory://", "--a2a"], cwd) as s:
        yield s


async def test_a_handoff_across_two_servers_keeps_one_conversation(
        support: ServeProcess) -> None:
    desk = Agent("desk", instructions="Send customers to support.", handoffs=["support"])
    remote = RemoteAgent("support", support.url)
    assert remote.description == "Routes customers to the right specialist."
    assert "billing" in remote.capabilities  # the served team's agents, as skills
    model = ScriptedModel([transfer("support", reason="a billing question")])
    runner = Runner(Team([desk, remote]), model=model)

    first = await runner.run("conv-1", "I was charged twice")
    assert first.status is RunStatus.COMPLETED and first.agent == "support"
    assert "order" in first.output  # billing, over there, asks which order
    state = await runner.get_session("conv-1")
    assert state is not None and "support" in state.metadata["a2a_tokens"]

    second = await runner.run("conv-1", "thanks, that is all")
    assert second.status is RunStatus.COMPLETED and second.agent == "support"

    # Over there, the A2A context is the same conversation: one session, billing sticky.
    seen = httpx.get(f"{support.url}/v1/sessions/conv-1/transcript",
                     headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
    users = [m["text"] for m in seen["messages"] if m["kind"] == "user"]
    assert users == ["I was charged twice", "thanks, that is all"]
    assert {m.get("agent") for m in seen["messages"] if m["kind"] == "assistant" and m["text"]} == \
        {"billing"}
    assert len(model.requests) == 1  # the second message went straight to the remote team
