"""OpenAI Agents SDK peer: ``Runner.run`` over agents linked by ``Agent.handoffs``.

Handoff trigger: each agent's scripted ``Model`` returns a ``ResponseFunctionToolCall`` whose
name is the SDK's own handoff tool name, read from the ``handoffs`` list the runner passes to
``get_response`` (``transfer_to_agent_{i+1}``); the runner executes the handoff. Checks read
``result.final_output``, ``result.last_agent.name`` and the ``HandoffOutputItem``s in
``result.new_items``.

Run inside .bench-venvs/openai-agents: ``python bench/peers/peer_openai_agents.py --figure turn``.
"""

from __future__ import annotations

import itertools
import os
import sys
from importlib.metadata import version
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agents import (
    Agent,
    Model,
    ModelResponse,
    Runner,
    SQLiteSession,
    Usage,
    set_tracing_disabled,
)
from agents.items import HandoffOutputItem
from common import ANSWER, Adapter, Turn, agent_name, expect, main
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

_ids = itertools.count()


class ScriptedModel(Model):
    """Zero-latency model: hand off to ``target`` (via the SDK's handoff tool) or answer."""

    def __init__(self, target: str | None) -> None:
        self.target = target

    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        n = next(_ids)
        if self.target is None:
            item: Any = ResponseOutputMessage(
                id=f"msg_{n}",
                type="message",
                role="assistant",
                status="completed",
                content=[
                    ResponseOutputText(type="output_text", text=ANSWER, annotations=[], logprobs=[])
                ],
            )
        else:
            (h,) = [h for h in handoffs if h.agent_name == self.target]
            item = ResponseFunctionToolCall(
                id=f"fc_{n}",
                call_id=f"call_{n}",
                type="function_call",
                name=h.tool_name,
                arguments="{}",
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")


class OpenAIAgentsAdapter(Adapter):
    framework = "openai-agents"
    version = version("openai-agents")
    import_module = "agents"

    def __init__(self) -> None:
        # No network here, and we measure orchestration only: no trace export.
        set_tracing_disabled(True)

    async def build(self, hops: int, persisted: str | None = None) -> Any:
        agents: list[Agent[Any]] = []
        nxt: Agent[Any] | None = None
        for i in range(hops, -1, -1):
            target = agent_name(i + 1) if i < hops else None
            a: Agent[Any] = Agent(
                name=agent_name(i),
                instructions=f"You are {agent_name(i)}.",
                model=ScriptedModel(target),
                handoffs=[nxt] if nxt is not None else [],
            )
            agents.append(a)
            nxt = a
        agents.reverse()
        return {"agents": agents, "max_turns": hops + 5}

    async def conversation(self, shared: Any, hops: int, conv: int) -> Any:
        # One conversation = the shared agents + its own session (the SDK's default
        # SQLiteSession, in memory) keyed by its own session id.
        return {**shared, "session": SQLiteSession(f"conv-{conv}")}

    async def turn(self, team: Any, conv: int) -> Any:
        return await Runner.run(
            team["agents"][0], "go", max_turns=team["max_turns"], session=team.get("session")
        )

    async def inspect(self, team: Any, result: Any, conv: int) -> Turn:
        handoffs = sum(isinstance(it, HandoffOutputItem) for it in result.new_items)
        expect(isinstance(result.final_output, str), f"final_output {result.final_output!r}")
        return Turn(result.final_output, result.last_agent.name, handoffs)


if __name__ == "__main__":
    main(OpenAIAgentsAdapter)
