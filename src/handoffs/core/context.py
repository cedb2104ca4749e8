"""What instructions callables and tools are told about the run they are part of."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic

from ..errors import HandoffsError

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
    asker: Any = field(default=None, repr=False, compare=False)
    """The run's one-shot model call, `(agent, text, output_type) -> awaitable answer`
    (what `ask` calls), given by the runtime; None outside a run. (`Any`, not a
    `Callable`: a tool's parameters are read as a schema, and this must not stop it.)"""

    async def ask(self, agent: Any, text: str, *, output_type: Any = None) -> Any:
        """Ask `agent` once, outside the conversation: its instructions, `text` as the
        one user message, no session, no tools. Returns the answer parsed into
        `output_type` (a pydantic model; default the agent's own `output_type`), else
        its text. The call goes through the run's executor; its tokens count in the
        turn's usage. For a guardrail that asks a classifier agent
        (`docs/guides/guardrails.md`)."""
        if self.asker is None:
            from ..errors import HandoffsError

            raise HandoffsError("ctx.ask works inside a run (a guardrail, a tool, a hook); "
                                "outside one, use runner.ask.", code="invalid_argument")
        return await self.asker(agent, text, output_type)

    sink: Callable[[str, dict[str, Any]], Awaitable[None] | None] | None = field(
        default=None, repr=False)
    """Where `progress` and `custom_event` send their events (the event type and its own
    fields; what it returns, if anything, is awaited): the turn sets it for the tool call
    it runs; None elsewhere. A unit test of a tool may pass its own
    (`lambda kind, fields: seen.append((kind, fields))`)."""

    async def progress(self, message: str) -> None:
        """Tell the client how the tool is getting on ("Looking up flight PA441…"): a
        `tool_progress` event, sent at once to every reader of the turn (a stream, the
        server's SSE and WebSocket, AG-UI, the web page) and kept in the session's event
        log. Only inside a tool call; elsewhere it raises `HandoffsError` (`no_tool_call`).
        """
        if not isinstance(message, str):
            raise HandoffsError(f"ctx.progress() takes a string, not "
                                f"{type(message).__name__}.", code="invalid_event")
        await self._send("tool_progress", {"message": message}, "progress")

    async def custom_event(self, name: str, data: Any = None) -> None:
        """Send the client an event of your own: a `custom_event` event with `name` and
        `data` (any JSON value: a copy of it is sent, so changing `data` later changes
        nothing), at once and kept in the session's event log, as `progress`. The web page
        hands it to `window.handoffs.on(name, fn)`; AG-UI sends it as `CUSTOM`. Data that
        is not JSON raises `HandoffsError` (`invalid_event`), as does use outside a tool.
        """
        import json

        if not isinstance(name, str) or not name:
            raise HandoffsError("ctx.custom_event() needs a name: a non-empty string.",
                                code="invalid_event")
        try:
            copy = json.loads(json.dumps(data, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise HandoffsError(
                f"The data of custom event {name!r} is not JSON ({exc}); send dicts, "
                "lists, strings, numbers, booleans and None only.",
                code="invalid_event") from exc
        await self._send("custom_event", {"name": name, "data": copy}, "custom_event")

    async def _send(self, kind: str, fields: dict[str, Any], method: str) -> None:
        if self.sink is None:
            raise HandoffsError(
                f"ctx.{method}() works only inside a tool call that a turn runs (this "
                "context has no event sink); a unit test of a tool can pass "
                "RunContext(..., sink=...).", code="no_tool_call")
        sent = self.sink(kind, fields)
        if sent is not None:
            await sent
