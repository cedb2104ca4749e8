"""The single-agent baseline: does a team's handoffs help, or would one agent holding every
tool do as well?

Studies of multi-agent systems keep finding that many trail one agent given all the
tools, so an evaluation of a team (`run_eval(..., baseline="single")`, `handoffs eval
--baseline single`) also plays its cases with `single_agent_team(team)`:

- one agent named `single` (`SINGLE_AGENT`), described as the whole team;
- every tool of the team's agents, each once by name (the first agent's when two agents
  have different tools of one name), and every agent's MCP servers;
- one system text: a line saying there is no one to hand off to, then each agent's
  instructions under its name, in team order (callable instructions are called for
  each request, as they would be for the agent itself);
- no handoff routes: people (`HumanAgent`) and remote agents are left out, their work
  cannot be merged; the entry agent's model, model settings and input guardrails, and
  the team's policy, so the two players differ only in the handoffs.

Routing labels (agent, path, handoff, kind, payload, `handed_off` or `waiting_for_human`
statuses) do not apply to it; the answer's labels do (the turn did not fail, tools that
must or must not be called, a `completed` or `waiting_for_approval` status).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from typing import Any

from ..core.agent import Agent
from ..core.context import RunContext
from ..core.team import Team
from ..core.tools import Tool
from ..errors import HandoffsError

log = logging.getLogger("handoffs.eval")

SINGLE = "single"
"""The baseline `run_eval(baseline=...)` and `--baseline` take: one agent, every tool."""
BASELINES = (SINGLE,)
"""Every baseline there is."""
SINGLE_AGENT = "single"
"""The name of the baseline's one agent."""

PREAMBLE = ("You are the only agent of this service: you do the work of every role below "
            "yourself, with the tools you have. There is no one to transfer or hand the "
            "conversation to; where a role says to hand off, do that role's work instead.")
"""The first paragraph of the single agent's system text."""


def single_agent_team(team: Team) -> Team:
    """A team of one agent that holds every tool of `team`'s agents (see the module)."""
    workers = [a for a in team.agents if not a.is_human and not a.is_remote]
    if not workers:
        raise HandoffsError("The team has no agent with a model to merge into a single "
                            "agent (only people or remote agents).", code="invalid_argument")
    entry = team[team.entry]
    first = entry if entry in workers else workers[0]
    single = Agent(
        SINGLE_AGENT,
        instructions=merged_instructions(workers),
        description="Every role of the team in one agent: " + "; ".join(
            f"{a.name} ({a.description})" if a.description else a.name for a in workers),
        tools=_tools(workers),
        model=first.model,
        model_settings=first.model_settings,
        input_guardrails=first.input_guardrails,
        mcp=tuple(dict.fromkeys(s for a in workers for s in a.mcp)),
    )
    return Team([single], entry=SINGLE_AGENT, policy=team.policy,
                summarizer=team.summarizer, context_type=team.context_type,
                context_public=team.context_public)


def merged_instructions(agents: Sequence[Agent]) -> Any:
    """The agents' instructions as one system text (`PREAMBLE`, then each agent's under
    its name); a callable when one of them is a callable."""
    if all(isinstance(a.instructions, str) for a in agents):
        return _joined([(a, str(a.instructions)) for a in agents])

    async def merged(ctx: RunContext) -> str:
        parts = []
        for a in agents:
            text: Any = a.instructions
            if callable(text):
                text = text(ctx)
                if inspect.isawaitable(text):
                    text = await text
            parts.append((a, str(text)))
        return _joined(parts)

    return merged


def _joined(parts: Sequence[tuple[Agent, str]]) -> str:
    sections = [PREAMBLE]
    for agent, text in parts:
        head = f"## As {agent.label}" + (f" ({agent.description})" if agent.description else "")
        sections.append(f"{head}\n{text.strip()}" if text.strip() else head)
    return "\n\n".join(sections)


def _tools(agents: Sequence[Agent]) -> list[Tool]:
    kept: dict[str, Tool] = {}
    for a in agents:
        for t in a.tools:
            held = kept.get(t.name)
            if held is None:
                kept[t.name] = t
            elif held is not t and held != t:
                log.warning("single-agent baseline: two tools are named %r; the one of the "
                            "first agent that has it is kept (%s's is left out)", t.name,
                            a.name)
    return list(kept.values())
