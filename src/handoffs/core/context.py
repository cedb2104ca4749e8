"""What instructions callables and tools are told about the run they are part of."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic

if TYPE_CHECKING:  # a default (PEP 696) for type checkers; at runtime a plain TypeVar
    from typing_extensions import TypeVar

    T = TypeVar("T", default=Any)
else:
    from typing import TypeVar

    T = TypeVar("T")


@dataclass(slots=True)
class HandoffContext:
    """How the current agent got the conversation: given to it as `ctx.handoff`."""

    source_agent: str
    """The agent that handed off (for `user_request`, the agent active before)."""
    target_agent: str
    """The agent that received the handoff (the one reading this context)."""
    handoff_type: str
    """The `HandoffReason` value: `llm`, `programmatic`, `user_request`, ..."""
    reason: str
    """The explanation the requester gave ("customer disputes a charge")."""
    payload: Any = None
    """The validated payload: an instance of the handoff's payload model, or None."""
    record_id: str = ""
    """The id of the `HandoffRecord` that made this handoff."""
    summary: str | None = None
    """For `history="summary"` handoffs: the summary the target was given."""
    error: dict[str, str] | None = None
    """For `error_recovery` handoffs: the failure (`code`, `message`, `agent`)."""
    results: dict[str, str] | None = None
    """For `plan_step` handoffs: answers of earlier steps by step name."""


@dataclass(slots=True)
class RunContext(Generic[T]):
    """Passed to instructions callables, tools, guardrails and hooks during a run.

    `shared` is the session's shared memory: what a tool writes there is persisted
    with the session and visible to every agent of the team. `context` is the team's typed
    session context (`Team(context_type=...)`: kept with the session), else what the
    caller passed to `runner.run(..., context=...)`; annotate `ctx: RunContext[Deps]` to
    have a type checker check what your code reads from it (a bare `RunContext` is
    `RunContext[Any]`).
    """

    session_id: str
    """The session the run belongs to."""
    agent: str
    """The name of the agent that is running."""
    turn: int
    """The session's turn number (1 for the first user message)."""
    shared: dict[str, Any]
    """The session's shared memory (JSON values only): written by tools, persisted with
    the session, read by every agent of the team."""
    context: T = None  # type: ignore[assignment]  # None when the caller passed nothing
    """The team's session context (`Team(context_type=...)`: stored with the session, a
    turn's changes kept unless it fails), else whatever the caller passed as
    `runner.run(..., context=...)`, never persisted."""
    handoff: HandoffContext | None = None
    """How this agent got the conversation, or None for the entry agent."""
    channel: str | None = None
    """The session's channel (`web`, `voice`, ...), as the caller gave it; None: unset."""
    call_id: str | None = None
    """In a tool: the id of the tool call being run, unique in the session (None
    elsewhere). A tool with effects can key them on it to make itself idempotent: a call
    a person approved runs at most once, but a plain tool may run again after a crash."""
