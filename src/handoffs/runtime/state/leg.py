"""A line of work and what it comes to: the session's main line or a delegation's own,
and each activation's outcome (an answer, a transfer, a failure, a pause).

State only: these objects hold what the decisions (`runtime.decisions`) read and write
and the driver (`runtime.driver`) carries from step to step; no behaviour beyond
bookkeeping.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...core.agent import Agent
from ...core.context import HandoffContext, RunContext
from ...core.guardrails import GuardrailCheck
from ...core.handoff import HandoffRecord, handoff_context
from ...core.history import Window
from ...core.messages import Message, Note
from ...core.team import AgentPlan, Route
from ...core.usage import Usage

if TYPE_CHECKING:
    from ...core.pending import PendingApproval


@dataclass(slots=True)
class Answer:
    text: str
    agent: str
    data: Any = None
    """The validated object of an agent with an `output_type` (`text` is its JSON)."""


@dataclass(slots=True)
class Transfer:
    route: Route | None
    record: HandoffRecord
    target: Agent
    payload: Any


@dataclass(slots=True)
class Fail:
    code: str
    message: str
    agent: str
    recoverable: bool = True
    """False for failures a fallback cannot fix (max_steps, script exhausted)."""
    exception: BaseException | None = None
    """The exception behind the failure, kept for `RunError.exception` and the log."""
    check: GuardrailCheck | None = None
    """For `guardrail_tripped`: the check that tripped (with a `reply`, the agent
    answers with it and the turn completes instead of failing)."""


@dataclass(slots=True)
class Pause:
    """The agent's response has calls that wait for a person's decision (stored in
    `SessionState.pending`); the turn ends `waiting_for_approval`."""

    agent: str
    frame: PendingApproval | None = None
    """A delegate's paused work (its response and its own messages), for its caller to
    store with the caller's response (`approvals.suspended`)."""


Outcome = Answer | Transfer | Fail | Pause


class Leg:
    """One thread of work: the session's main line, or a delegation's private line.

    The main line appends to the session transcript and sees it through the session's
    view; a delegation appends to its own list and sees a fixed window of the transcript
    followed by that list.
    """

    __slots__ = ("_handoff", "agent", "base", "ctx", "depth", "failures", "force", "guard",
                 "hidden", "invalid",
                 "last_refusal", "last_word", "line", "main", "note", "note_at", "nudged",
                 "pausable", "payload", "plan", "record", "reminded", "rendered", "route",
                 "spent", "sub", "summary", "system", "truncated")

    def __init__(self, plan: AgentPlan, main: bool, depth: int = 0,
                 base: Window | None = None, line: str | None = None) -> None:
        self.plan = plan
        self.agent = plan.agent
        self.main = main
        self.depth = depth
        self.base = base
        self.line = line
        """The delegation record this line works for (None: the main conversation)."""
        self.pausable = main
        """Whether a call that needs approval may pause this line (the main line, and a
        delegation made by the main line's model; not a plan step nor a nested one)."""
        self.sub: list[Message] = []
        self.rendered: list[Message] = []
        self.record: HandoffRecord | None = None
        """The handoff that gave the current agent the work (None: the entry agent)."""
        self.payload: Any = None
        self.note: Note | None = None
        """The handoff's note as the agent's model sees it (`decisions.views.note_of`)."""
        self.note_at = 0
        """A delegation line's: where in its own messages the note sits (the handoff)."""
        self._handoff: HandoffContext | None = None
        self.route: Route | None = None
        self.summary: str | None = None
        self.ctx: RunContext | None = None
        """Cached for the current agent; cleared whenever the agent or its handoff changes."""
        self.system: str | None = None
        """Cached system text when the agent's instructions are a plain string."""
        # What the current agent has been through in this turn (`runtime.converge`),
        # reset by `switch` (assigned here, not in a method: this runs per handoff).
        self.failures = 0
        """Its responses in a row that got nothing but refusals and errors."""
        self.last_refusal: tuple[str, str] | None = None
        """(target, code) of its latest refused handoff."""
        self.hidden: frozenset[str] = frozenset()
        """Handoff tools no longer offered to it (refused twice in a row)."""
        self.force: tuple[tuple[Any, ...], str | None] | None = None
        """The tools and tool choice of its next request only (a narrated handoff)."""
        self.nudged = False
        """Whether it was already asked once more after narrating a handoff."""
        self.last_word = False
        """Whether it was given its last word (a request without tools) after steps
        without progress."""
        self.reminded = False
        """Whether it was already told once that its answer skipped the call its forcing
        `tool_choice` asks for (a provider that does not enforce it, or relaxed it)."""
        self.truncated = 0
        """Its answers cut short by the output limit in this activation."""
        self.invalid = 0
        """Its answers in this activation that were not its output type (three fail it:
        `decisions.response.answered`); set to 0 when an activation starts."""
        self.spent: Usage | None = None
        """The tokens it spent in this turn on this line (`HandoffRecord.usage`)."""
        self.guard: Awaitable[Fail | None] | None = None
        """The agent's input guardrails while they run beside its first model call
        (`driver.guardrails.begin`): awaited once, before that call's response counts."""

    def switch(self, plan: AgentPlan) -> None:
        self.plan = plan
        self.agent = plan.agent
        self.ctx = None
        self.system = None
        self.failures = 0
        self.last_refusal = None
        self.hidden = frozenset()
        self.force = None
        self.nudged = self.last_word = self.reminded = False
        self.truncated = 0
        self.spent = None

    @property
    def handoff(self) -> HandoffContext | None:
        """`ctx.handoff` for the current agent, built only when someone asks for it."""
        h = self._handoff
        if h is None and self.record is not None:
            h = self._handoff = handoff_context(self.record, self.payload)
        return h

    def handed(self, record: HandoffRecord | None, payload: Any, route: Route | None) -> None:
        """Record how the current agent got the work (invalidates the caches)."""
        self.record = record
        self.payload = payload
        self.note = None
        self.note_at = len(self.rendered)
        self._handoff = None
        self.route = route
        self.summary = None
        self.ctx = None
        self.system = None
