"""Guardrails: checks on the text an agent receives (input) or produces (output).

A guardrail is a sync or async function `(ctx, text) -> GuardrailResult` (`None` or
`True` pass too). It belongs to one agent and is never inherited through a handoff.

When they run (`docs/guides/guardrails.md`):
- input: the guardrails of the agent that receives the user's message run once per
  message, concurrently with each other and with that agent's first model call (whose
  response is thrown away, none of its tool calls run, when one trips); a guardrail made
  with `guardrail(block=True)` makes them run before the model call instead. A handoff
  target checks the message again only when its route asks (`Handoff(check_input=True)`).
- output: the answering agent's guardrails run once on the answer about to be delivered.

A trip with a `reply` answers the user: the turn completes with the reply, spoken by the
agent that checked; the refused message stays in the transcript but leaves later model
views. A trip without one ends the turn FAILED with code `guardrail_tripped`, or hands
off to the team's fallback when there is one. Every check is a `guardrail_checked` event
and a `GuardrailCheck` in `RunResult.guardrails`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

from .context import RunContext

if TYPE_CHECKING:
    import pydantic

    from .agent import Agent
    from .event_data import GuardrailChecked


@dataclass(slots=True, frozen=True)
class GuardrailResult:
    """Pass, or trip with a message saying what was wrong (and maybe a reply)."""

    tripped: bool = False
    """True: the text is refused."""
    message: str = ""
    """Why it was refused, for logs, events and operators (never shown to the user)."""
    reply: str | None = None
    """What the agent answers the user instead (the turn then completes with it);
    None: the trip fails the turn (`guardrail_tripped`) or goes to the fallback."""
    reasoning: str | None = None
    """Why the guardrail decided as it did (a classifier's explanation), for events and
    the inspector; None: not given."""

    @classmethod
    def ok(cls, reasoning: str | None = None) -> GuardrailResult:
        """The result of a guardrail that lets the text through."""
        return _PASS if reasoning is None else cls(False, "", None, reasoning)

    @classmethod
    def trip(cls, message: str, *, reply: str | None = None,
             reasoning: str | None = None) -> GuardrailResult:
        """The result of a guardrail that stops the text, saying why (`message`); with
        a `reply`, the agent answers the user with it and the turn completes."""
        return cls(True, message, reply, reasoning)


_PASS = GuardrailResult()

Guardrail = Callable[[RunContext, str], Any]
"""`(ctx, text) -> GuardrailResult` (or an awaitable of one)."""


@dataclass(slots=True, frozen=True)
class GuardrailCheck:
    """One guardrail's verdict in a turn: a `guardrail_checked` event, as a value
    (`RunResult.guardrails`)."""

    name: str
    """The guardrail's name (`guardrail(name=...)`, else its function's)."""
    agent: str
    """The agent whose guardrail it is."""
    stage: str
    """`input` (the user's message, or a delegate's task) or `output` (an answer)."""
    passed: bool
    """True: the text went through."""
    message: str = ""
    """Why it tripped (empty when it passed)."""
    reasoning: str | None = None
    """The guardrail's own explanation, when it gave one."""
    reply: str | None = None
    """What the agent answered instead, for a trip with a reply."""

    def to_dict(self) -> GuardrailChecked:
        """The event's fields: name, agent, stage, passed, message (reasoning and reply
        when set)."""
        d: GuardrailChecked = {"name": self.name, "agent": self.agent, "stage": self.stage,
                             "passed": self.passed, "message": self.message}
        if self.reasoning is not None:
            d["reasoning"] = self.reasoning
        if self.reply is not None:
            d["reply"] = self.reply
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GuardrailCheck:
        """A check from `to_dict()`'s data (or a `guardrail_checked` event's)."""
        return cls(d["name"], d.get("agent", ""), d.get("stage", ""), bool(d["passed"]),
                   d.get("message", ""), d.get("reasoning"), d.get("reply"))


G = TypeVar("G", bound=Callable[..., Any])


@overload
def guardrail(fn: G, /) -> G: ...
@overload
def guardrail(*, name: str | None = None, block: bool = False,
              asks: Iterable[Agent] = ()) -> Callable[[G], G]: ...
def guardrail(fn: Any = None, /, *, name: str | None = None, block: bool = False,
              asks: Iterable[Agent] = ()) -> Any:
    """Mark a function as a guardrail: `@guardrail` or `@guardrail(name=..., block=True)`.

    `name`: what events, `RunResult.guardrails`, `handoffs stats` and eval's
    `refused_by` call it (default: the function's name). `block=True`: the agent's
    input guardrails finish before its first model call (no model call is paid for a
    refused message; the answer waits for the check) instead of running beside it.
    `asks`: the agents it asks with `ctx.ask` that are not team members (classifiers):
    the team knows them by name (`Team.asked`), so a Temporal worker, which resolves a
    model call's agent by name, can answer for them; they never get a handoff."""
    asked = tuple(asks)

    def mark(f: Any) -> Any:
        if name is not None:
            f.name = name
        f.block = block
        if asked:
            f.asks = asked
        return f
    return mark if fn is None else mark(fn)


def asked_agents(g: Any) -> tuple[Agent, ...]:
    """The agents a guardrail declared it asks (`guardrail(asks=...)`)."""
    return tuple(getattr(g, "asks", ()))


def blocks(g: Any) -> bool:
    """Whether the guardrail asked to finish before the model call (`block=True`)."""
    return bool(getattr(g, "block", False))


def guardrail_name(g: Any) -> str:
    """A readable name for events and errors."""
    return getattr(g, "name", None) or getattr(g, "__name__", None) or type(g).__name__


class max_length:
    """Trips when the text is longer than `limit` characters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.name = f"max_length({limit})"

    def __call__(self, ctx: RunContext, text: str) -> GuardrailResult:
        if len(text) > self.limit:
            return GuardrailResult.trip(
                f"The text is {len(text)} characters long; the limit is {self.limit}."
            )
        return _PASS


class min_length:
    """Trips when the text (stripped) is shorter than `limit` characters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.name = f"min_length({limit})"

    def __call__(self, ctx: RunContext, text: str) -> GuardrailResult:
        if len(text.strip()) < self.limit:
            return GuardrailResult.trip(f"The text is shorter than {self.limit} characters.")
        return _PASS


class deny_patterns:
    """Trips when any of the regular expressions matches (case-insensitive by default)."""

    def __init__(self, patterns: Iterable[str], flags: int = re.IGNORECASE,
                 message: str | None = None) -> None:
        self.patterns = [re.compile(p, flags) for p in patterns]
        self.message = message
        self.name = "deny_patterns"

    def __call__(self, ctx: RunContext, text: str) -> GuardrailResult:
        for p in self.patterns:
            if p.search(text):
                return GuardrailResult.trip(
                    self.message or f"The text matches a denied pattern ({p.pattern!r})."
                )
        return _PASS


class json_output:
    """Trips unless the text is JSON that validates against the pydantic `model`."""

    def __init__(self, model: type[pydantic.BaseModel]) -> None:
        self.model = model
        self.name = f"json_output({model.__name__})"

    def __call__(self, ctx: RunContext, text: str) -> GuardrailResult:
        import pydantic

        try:
            self.model.model_validate_json(text)
        except pydantic.ValidationError as exc:
            errors = "; ".join(
                f"{'.'.join(str(x) for x in e['loc']) or 'value'}: {e['msg']}"
                for e in exc.errors()[:5]
            )
            return GuardrailResult.trip(
                f"The answer is not valid {self.model.__name__} JSON: {errors}."
            )
        return _PASS
