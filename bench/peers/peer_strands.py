"""Strands Agents peer: ``strands.multiagent.Swarm`` over ``strands.Agent`` nodes.

Handoff trigger: the Swarm injects its own ``handoff_to_agent(agent_name, message, context)``
tool into every node. Each agent's scripted ``Model.stream`` yields the Bedrock-style stream
events of one ``toolUse`` of that tool with ``{"agent_name": "agent_{i+1}", ...}`` (the tool
name is taken from the ``tool_specs`` the agent passes in), or a text block ``done`` with
``stopReason: end_turn``. Strands needs one more model call per handoff than the other peers: after
the handoff tool's result the agent asks the model again, and only when the model ends its turn
does the Swarm switch to the target, so the script then answers a short text. Checks read the
``SwarmResult``: ``status``, ``node_history`` (agents that ran, in order: handoffs = len - 1)
and the last node's ``AgentResult`` text.

The Swarm resets every node's messages at the start of each invocation, so timed figures reuse
one Swarm; the memory figure builds one Swarm (and its agents) per conversation, since agents
hold the conversation.

Run inside .bench-venvs/strands: ``python bench/peers/peer_strands.py --figure turn``.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import AsyncIterator
from importlib.metadata import version
from typing import Any

# OpenTelemetry SDK off (strands only exports when an OTLP endpoint is configured; none is).
os.environ["OTEL_SDK_DISABLED"] = "true"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import ANSWER, Adapter, Turn, agent_name, expect, main
from strands import Agent
from strands.models import Model
from strands.multiagent import Swarm
from strands.multiagent.base import Status

_ids = itertools.count()
_USAGE = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


class ScriptedModel(Model):
    """Zero-latency model: call the swarm's handoff tool toward ``target``, or answer."""

    def __init__(self, target: str | None) -> None:
        self.target = target
        self.config: dict[str, Any] = {"model_id": "scripted"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark has no structured output")

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        yield {"messageStart": {"role": "assistant"}}
        # A Strands agent keeps looping after a tool result until the model ends its turn, and
        # the Swarm moves to the handoff target only then; so after the handoff tool's result
        # the script ends the turn with a short text, as a real model would.
        after_tool = any("toolResult" in block for block in messages[-1]["content"])
        if self.target is None or after_tool:
            text = ANSWER if self.target is None else f"handed off to {self.target}"
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": text}}}
            yield {"contentBlockStop": {}}
            stop = "end_turn"
        else:
            (name,) = [s["name"] for s in tool_specs or [] if s["name"] == "handoff_to_agent"]
            args = {"agent_name": self.target, "message": "go"}
            use = {"toolUseId": f"tooluse_{next(_ids)}", "name": name}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
            yield {"contentBlockStop": {}}
            stop = "tool_use"
        yield {"messageStop": {"stopReason": stop}}
        yield {"metadata": {"usage": _USAGE, "metrics": {"latencyMs": 0}}}


class StrandsAdapter(Adapter):
    framework = "strands-agents"
    version = version("strands-agents")
    import_module = "strands, strands.multiagent"

    async def build(self, hops: int, persisted: str | None = None) -> Any:
        agents = [
            Agent(
                name=agent_name(i),
                model=ScriptedModel(agent_name(i + 1) if i < hops else None),
                system_prompt=f"You are {agent_name(i)}.",
                callback_handler=None,  # the default handler prints every streamed chunk
            )
            for i in range(hops + 1)
        ]
        # Defaults (20/20) would cap H=20 chains; node_history holds H+1 entries.
        return Swarm(agents, max_handoffs=hops + 5, max_iterations=hops + 5)

    async def conversation(self, shared: Any, hops: int, conv: int) -> Any:
        return await self.build(hops)

    async def turn(self, team: Any, conv: int) -> Any:
        return await team.invoke_async("go")

    async def inspect(self, team: Any, result: Any, conv: int) -> Turn:
        expect(result.status == Status.COMPLETED, f"swarm status {result.status}")
        history = [node.node_id for node in result.node_history]
        expect(
            history == [agent_name(i) for i in range(len(history))],
            f"node history {history}",
        )
        last = history[-1]
        answer = "".join(
            block.get("text", "") for block in result.results[last].result.message["content"]
        )
        return Turn(answer, last, len(history) - 1)


if __name__ == "__main__":
    main(StrandsAdapter)
