"""AutoGen AgentChat peer: a ``Swarm`` team of ``AssistantAgent``s with ``handoffs=[...]``.

Handoff trigger: ``agent_i`` has ``handoffs=["agent_{i+1}"]``; AgentChat exposes that as the tool
``transfer_to_agent_{i+1}``. The agent's scripted ``ChatCompletionClient`` returns a
``CreateResult`` whose content is one ``FunctionCall`` to that tool (name taken from the tools
passed to ``create``); ``AssistantAgent`` turns it into a ``HandoffMessage`` and the Swarm
manager routes to the target. The last agent returns the text ``done`` and the team stops on
``TextMentionTermination("done")`` (the usual AgentChat stop-word pattern). Checks read
``TaskResult.messages``: the last ``TextMessage``'s ``source`` and ``content``, and the
``HandoffMessage``s (each ``source``/``target`` in chain order).

AgentChat agents and teams are stateful (they hold the thread), so timed figures call
``team.reset()`` between turns (not timed), and the memory figure builds one team per
conversation, as a server holding 1,000 live conversations must.

Run inside .bench-venvs/autogen: ``python bench/peers/peer_autogen.py --figure turn``.
"""

from __future__ import annotations

import itertools
import os
import sys
from importlib.metadata import version
from typing import Any

# Runtime telemetry off (network is closed; we measure orchestration only).
os.environ["AUTOGEN_DISABLE_RUNTIME_TRACING"] = "true"
os.environ["OTEL_SDK_DISABLED"] = "true"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import TextMentionTermination
from autogen_agentchat.messages import HandoffMessage, TextMessage
from autogen_agentchat.teams import Swarm
from autogen_core import FunctionCall
from autogen_core.models import ChatCompletionClient, CreateResult, ModelInfo, RequestUsage
from common import ANSWER, Adapter, Turn, agent_name, expect, main

_ids = itertools.count()
_NO_USAGE = RequestUsage(prompt_tokens=0, completion_tokens=0)
_INFO = ModelInfo(
    vision=False,
    function_calling=True,
    json_output=False,
    family="unknown",
    structured_output=False,
)


class ScriptedClient(ChatCompletionClient):
    """Zero-latency client: call the handoff tool to ``target``, or answer."""

    def __init__(self, target: str | None) -> None:
        self.target = target

    async def create(self, messages: Any, *, tools: Any = (), **kwargs: Any) -> CreateResult:
        if self.target is None:
            return CreateResult(finish_reason="stop", content=ANSWER, usage=_NO_USAGE, cached=False)
        names = [t.name if hasattr(t, "name") else t["name"] for t in tools]
        (name,) = [n for n in names if n == f"transfer_to_{self.target}"]
        call = FunctionCall(id=f"call_{next(_ids)}", name=name, arguments="{}")
        return CreateResult(
            finish_reason="function_calls", content=[call], usage=_NO_USAGE, cached=False
        )

    def create_stream(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")

    async def close(self) -> None:
        return None

    def actual_usage(self) -> RequestUsage:
        return _NO_USAGE

    def total_usage(self) -> RequestUsage:
        return _NO_USAGE

    def count_tokens(self, messages: Any, **kwargs: Any) -> int:
        return 0

    def remaining_tokens(self, messages: Any, **kwargs: Any) -> int:
        return 1_000_000

    @property
    def capabilities(self) -> Any:
        return _INFO

    @property
    def model_info(self) -> ModelInfo:
        return _INFO


class AutogenAdapter(Adapter):
    framework = "autogen-agentchat"
    version = version("autogen-agentchat")
    import_module = "autogen_agentchat.agents, autogen_agentchat.teams"

    async def build(self, hops: int, persisted: str | None = None) -> Any:
        agents = []
        for i in range(hops + 1):
            target = agent_name(i + 1) if i < hops else None
            agents.append(
                AssistantAgent(
                    agent_name(i),
                    model_client=ScriptedClient(target),
                    handoffs=[target] if target else [],
                    system_message=f"You are {agent_name(i)}.",
                )
            )
        stop = TextMentionTermination(ANSWER)
        return Swarm(agents, termination_condition=stop, max_turns=hops + 5)

    async def reset(self, team: Any) -> None:
        await team.reset()

    async def conversation(self, shared: Any, hops: int, conv: int) -> Any:
        return await self.build(hops)

    async def turn(self, team: Any, conv: int) -> Any:
        return await team.run(task="go")

    async def inspect(self, team: Any, result: Any, conv: int) -> Turn:
        msgs = result.messages
        handoffs = [m for m in msgs if isinstance(m, HandoffMessage)]
        for k, m in enumerate(handoffs):
            expect(
                m.source == agent_name(k) and m.target == agent_name(k + 1),
                f"handoff {k} is {m.source}->{m.target}",
            )
        last = msgs[-1]
        expect(isinstance(last, TextMessage), f"last message is {type(last).__name__}")
        return Turn(last.content, last.source, len(handoffs))


if __name__ == "__main__":
    main(AutogenAdapter)
