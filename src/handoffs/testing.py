"""Test helpers for users' own tests: a model that plays a script, no network, no keys.

    model = ScriptedModel([
        transfer("billing", reason="duplicate charge"),   # triage's response
        call("lookup_order", order_id="A-1"),              # billing's first response
        reply("Refunded."),                                # billing's answer
    ])
    runner = Runner(team, model=model)

Steps are consumed in order, whichever agent asks; `model.requests` records each request.
With one script per agent, each agent plays only its own steps, so delegations running
concurrently cannot take each other's:

    model = ScriptedModel({
        "billing": [transfer("policy"), transfer("fraud"), reply("Refunded.")],
        "policy": [reply("Allowed.")],
        "fraud": [reply("No fraud.")],
    })

`RuleModel` (from `handoffs.rules`, re-exported here) is the other offline model: it
routes by keywords and answers from templates, and never runs out.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core.messages import ToolCall
from .errors import ScriptExhausted
from .models.base import ModelRequest, ModelResponse, TextDelta, Usage, chunked
from .rules import Rule, RuleModel


@dataclass(slots=True, frozen=True)
class Reply:
    """A text part of a scripted response."""

    text: str


@dataclass(slots=True, frozen=True)
class Call:
    """A tool-call part of a scripted response; `arguments` is the raw text sent."""

    name: str
    arguments: str
    id: str | None = None
    target: str | None = None
    """For `transfer(...)`: the agent handed to; the call takes the name of whichever of
    that agent's default handoff tools the request offers (`ask_<agent>` on a delegation
    route)."""


Part = Reply | Call
Step = (Part | Sequence[Part] | Callable[[ModelRequest], Any] | BaseException
        | type[BaseException] | ModelResponse)
"""One scripted model response: a part, a list of parts, a callable `request -> step`,
an exception to raise, or a ready `ModelResponse`."""


def reply(text: str) -> Reply:
    """A response (or part of one) that is plain text."""
    return Reply(text)


def call(tool: str, _id: str | None = None, **args: Any) -> Call:
    """A call of `tool` with keyword arguments (sent as JSON)."""
    return Call(tool, json.dumps(args), _id)


def raw_call(tool: str, arguments: str, _id: str | None = None) -> Call:
    """A call of `tool` whose argument text is sent exactly as given (e.g. broken JSON)."""
    return Call(tool, arguments, _id)


def transfer(agent: str, **args: Any) -> Call:
    """A handoff to `agent` by its route's default tool: `transfer_to_<agent>`, or
    `ask_<agent>` when the request offers that one (a delegation route)."""
    from .core.handoff import Handoff

    return Call(Handoff.default_tool_name(agent), json.dumps(args), target=agent)


def _named(c: Call, request: ModelRequest) -> str:
    """The tool name a scripted call goes out with (see `Call.target`)."""
    if c.target is None:
        return c.name
    from .core.handoff import Handoff

    offered = {t.name for t in request.tools}
    ask = Handoff.default_ask_name(c.target)
    return ask if c.name not in offered and ask in offered else c.name


class ScriptedModel:
    """A `Model` that answers from a script: for tests and offline demos.

    `steps` is one script shared by every agent (steps are consumed in order, whichever
    agent asks) or a mapping of agent name to that agent's own script. Running out of
    steps raises `ScriptExhausted`, which fails the run with a clear message.
    """

    def __init__(self, steps: Sequence[Step] | Mapping[str, Sequence[Step]] = (), *,
                 stream_chunks: int | None = None) -> None:
        self.scripts: dict[str, list[Step]] | None = None
        """The per-agent scripts, or None when one script is shared (`steps`)."""
        self.steps: list[Step] = []
        """The shared script (empty when scripts are per agent)."""
        if isinstance(steps, Mapping):
            self.scripts = {agent: list(script) for agent, script in steps.items()}
        else:
            self.steps = list(steps)
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""
        self.stream_chunks = stream_chunks
        """When streaming, split text into pieces of this many characters and yield each as
        a `TextDelta`. None (default): no deltas, only the whole response, so event
        sequences in tests stay exact."""
        self._next = 0
        self._played: dict[str, int] = {}
        self._ids = itertools.count(1)

    @property
    def remaining(self) -> int:
        """Steps not yet played (of every agent's script)."""
        if self.scripts is None:
            return len(self.steps) - self._next
        return sum(len(s) - self._played.get(a, 0) for a, s in self.scripts.items())

    def add(self, *steps: Step, agent: str | None = None) -> None:
        """Append steps to the script (to `agent`'s, when scripts are per agent)."""
        if self.scripts is None:
            if agent is not None:
                raise TypeError("This ScriptedModel has one shared script; add steps "
                                "without agent=, or build it with a script per agent.")
            self.steps.extend(steps)
            return
        if agent is None:
            raise TypeError("This ScriptedModel has a script per agent; say whose steps "
                            "these are: add(..., agent='billing').")
        self.scripts.setdefault(agent, []).extend(steps)

    def _take(self, agent: str) -> Step:
        scripts = self.scripts
        if scripts is None:
            if self._next >= len(self.steps):
                raise ScriptExhausted(
                    f"The scripted model has no step left for agent {agent!r} "
                    f"(it played all {len(self.steps)}). Add a step for this request."
                )
            step = self.steps[self._next]
            self._next += 1
            return step
        script = scripts.get(agent)
        if script is None:
            raise ScriptExhausted(
                f"The scripted model has no script for agent {agent!r} (it has scripts for "
                f"{', '.join(scripts) or 'no agent'}). Add one: {{{agent!r}: [...]}}."
            )
        played = self._played.get(agent, 0)
        if played >= len(script):
            raise ScriptExhausted(
                f"The scripted model has no step left for agent {agent!r} (it played all "
                f"{len(script)} of {agent!r}'s steps). Add a step to {agent!r}'s script."
            )
        self._played[agent] = played + 1
        return script[played]

    def _respond(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        step: Any = self._take(request.agent)
        if callable(step) and not isinstance(step, type):
            step = step(request)
        if isinstance(step, BaseException) or (
            isinstance(step, type) and issubclass(step, BaseException)
        ):
            raise step
        if isinstance(step, ModelResponse):
            return step
        parts = (step,) if isinstance(step, Reply | Call) else tuple(step)
        texts: list[str] = []
        calls: list[ToolCall] = []
        for p in parts:
            if isinstance(p, Reply):
                texts.append(p.text)
            elif isinstance(p, Call):
                calls.append(ToolCall(p.id or f"call_{next(self._ids)}", _named(p, request),
                                      p.arguments))
            else:
                raise TypeError(f"Not a scripted part: {p!r}; use reply(), call() or transfer().")
        return ModelResponse("".join(texts), tuple(calls), Usage(0, 0, 1), "scripted")

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The next step of the script (of the asking agent's own script, for a mapping);
        `ScriptExhausted` when none is left."""
        return self._respond(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """The next step streamed in pieces of `stream_chunks` characters, then the whole
        response."""
        for piece in chunked(self._respond(request), self.stream_chunks):
            yield piece


__all__ = ["Call", "Reply", "Rule", "RuleModel", "ScriptedModel", "Step", "call", "raw_call",
           "reply", "transfer"]
