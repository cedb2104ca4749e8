"""The policy: may this handoff happen? A pure function of the request, the team and
the session. Each refusal has a stable code and a sentence a model can act on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .agent import Agent
    from .handoff import Handoff
    from .session import SessionState


class TeamView(Protocol):
    """What the policy reads of a team (`core.team.Team` is one): its agents by name,
    the targets an agent may hand off to, and its supervisor. A protocol, so the policy
    does not import the team that holds it."""

    @property
    def agents(self) -> Sequence[Agent]: ...

    @property
    def supervisor(self) -> str | None: ...

    def get(self, name: str) -> Agent | None: ...

    def handoff_targets(self, source: str) -> list[str]: ...

UNKNOWN_TARGET = "unknown_target"
SELF_HANDOFF = "self_handoff"
NOT_DECLARED = "not_declared"
TARGET_DISABLED = "target_disabled"
SYSTEM_ONLY = "system_only"
MISSING_CAPABILITY = "missing_capability"
CHANNEL_UNSUPPORTED = "channel_unsupported"
LOOP_DETECTED = "loop_detected"
TOO_MANY_HANDOFFS = "too_many_handoffs"
INVALID_PAYLOAD = "invalid_payload"
MULTIPLE_HANDOFFS = "multiple_handoffs"
NOT_USER_SELECTABLE = "not_user_selectable"
TOO_DEEP = "too_deep"
HELD_BY_PERSON = "held_by_person"

REJECTION_CODES = (
    UNKNOWN_TARGET, SELF_HANDOFF, NOT_DECLARED, TARGET_DISABLED, SYSTEM_ONLY,
    MISSING_CAPABILITY, CHANNEL_UNSUPPORTED, LOOP_DETECTED, TOO_MANY_HANDOFFS,
    INVALID_PAYLOAD, MULTIPLE_HANDOFFS, NOT_USER_SELECTABLE, TOO_DEEP, HELD_BY_PERSON,
)
"""Every code a handoff request can be refused with."""

LOOP_SCOPES = ("turn", "session")


@dataclass(slots=True, frozen=True)
class Rejection:
    """Why a handoff request was refused: a stable code and a sentence for the model."""

    code: str
    message: str


class HandoffRequest:
    """One handoff asked for, as the policy reviews it (`HandoffPolicy.review`). A plain
    slotted class: a request is made for every transfer a model asks for, and a dataclass
    or NamedTuple costs more to build (and a dataclass to import)."""

    __slots__ = ("depth", "handoffs_this_turn", "line", "payload_error", "route",
                 "route_enabled", "source", "target")

    def __init__(self, source: str, target: str, route: Handoff | None = None,
                 handoffs_this_turn: int = 0, payload_error: str | None = None,
                 depth: int = 0, route_enabled: bool = True, line: str | None = None
                 ) -> None:
        self.source = source
        """The agent asking (for a person's hand-back, the human agent)."""
        self.target = target
        """The agent asked for."""
        self.route = route
        """The source's declared route to the target (None: it declared none)."""
        self.handoffs_this_turn = handoffs_this_turn
        """Handoffs accepted so far in this user turn."""
        self.payload_error = payload_error
        """Why the payload does not validate against the route's model, if it does not."""
        self.depth = depth
        """How deep in delegations the request is made (0: the main conversation)."""
        self.route_enabled = route_enabled
        """The route's `enabled` flag, evaluated for this run by the caller."""
        self.line = line
        """The delegation the request is made in (its record id; None: the main
        conversation): the loop rule counts that line's transfers only."""

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in (
            "source", "target", "route", "handoffs_this_turn", "payload_error", "depth",
            "route_enabled", "line"))
        return f"HandoffRequest({fields})"


@dataclass(slots=True, frozen=True)
class HandoffPolicy:
    """The limits every handoff request is checked against (see DESIGN.md's rules)."""

    max_handoffs_per_turn: int = 5
    """Accepted handoffs allowed in one user turn; the next is `too_many_handoffs`."""
    loop_window: int = 5
    """How many of the latest accepted one-way handoffs (in `loop_scope`) the loop rule
    looks at."""
    loop_limit: int = 2
    """A target that already received this many of those handoffs is `loop_detected`."""
    allow_self: bool = False
    """True lets an agent hand off to itself (rarely what anyone wants)."""
    max_depth: int = 3
    """How deep delegations (`returns=True`) may nest; deeper is `too_deep`."""
    loop_scope: str = "turn"
    """Which handoffs the loop rule counts. `"turn"` (default): only the accepted one-way
    handoffs made since the user's last message (records of the current session turn
    that are not delegations), so a conversation may go triage -> billing again in a
    later turn. `"session"`: the session's last `loop_window` accepted one-way handoffs,
    whatever the turns."""
    repeated_tool_calls: int | None = 2
    """How many identical ordinary tool calls (same agent, tool and arguments, compared
    as canonical JSON) one turn answers: the first runs, the next ones are answered from
    its result with a sentence saying so, and past this many they are refused with
    `repeated_tool_call` (an error result; the turn goes on). None: never checked."""

    narrated_handoffs: bool = True
    """True: an answer that announces a transfer to one of the agent's routes ("I'll
    transfer you to billing") but calls no tool is not delivered yet: the agent is asked
    once more with its transfer tools forced (event `agent_nudged`, code
    `narrated_handoff`). If it answers in text again, that answer is delivered."""
    max_failed_steps: int | None = 3
    """How many responses in a row of one agent in one turn may get nothing but refusals
    and errors (refused handoffs, bad arguments, unknown or failing tools, a repeated
    call, an unreadable response, a refusal echoed to the user) before the turn stops
    trying: the agent fails with `no_progress` and the team's fallback takes over (once
    per turn), long before `max_steps`. None: never."""
    stuck_answer: str | None = None
    """What the user is told when an agent fails with `no_progress` and no fallback can
    take over: the turn is COMPLETED with this text. None: the turn fails (`no_progress`)."""
    person_keeps_conversation: bool = False
    """True: while a person (a human agent) holds the conversation, the user cannot pick
    another agent (`held_by_person`); only the person hands it back. False (default): the
    user may take it away (the web page asks before it does)."""

    def __post_init__(self) -> None:
        m = self.max_failed_steps
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            from ..errors import HandoffsError

            raise HandoffsError(
                f"HandoffPolicy max_failed_steps must be at least 1, or None to turn the "
                f"check off, not {m!r}.", code="invalid_policy")
        r = self.repeated_tool_calls
        if r is not None and (isinstance(r, bool) or not isinstance(r, int) or r < 1):
            from ..errors import HandoffsError

            raise HandoffsError(
                f"HandoffPolicy repeated_tool_calls must be at least 1, or None to turn "
                f"the check off, not {r!r}.", code="invalid_policy")
        if self.loop_scope not in LOOP_SCOPES:
            from ..errors import HandoffsError

            raise HandoffsError(
                f"HandoffPolicy loop_scope must be 'turn' or 'session', not "
                f"{self.loop_scope!r}.", code="invalid_policy")

    def check(
        self,
        team: TeamView,
        source: str,
        target: str,
        route: Handoff | None,
        session: SessionState,
        handoffs_this_turn: int,
        payload_error: str | None = None,
        depth: int = 0,
        route_enabled: bool = True,
        line: str | None = None,
    ) -> Rejection | None:
        """`review` of a request given field by field (kept for callers of the first
        versions; the runtime builds a `HandoffRequest`)."""
        return self.review(team, HandoffRequest(
            source, target, route, handoffs_this_turn, payload_error, depth, route_enabled,
            line), session)

    def review(self, team: TeamView, request: HandoffRequest, session: SessionState
               ) -> Rejection | None:
        """The first rule `request` breaks, in the documented order, or None."""
        source = request.source
        target = request.target
        agent = team.get(target)
        if agent is None:
            names = ", ".join(team.handoff_targets(source)) or "none"
            return Rejection(
                UNKNOWN_TARGET,
                f"There is no agent named {target!r}. You can hand off to: {names}.",
            )
        if target == source and not self.allow_self:
            return Rejection(
                SELF_HANDOFF,
                f"You are already {source!r}; handle the request yourself or hand off "
                "to another agent.",
            )
        if request.route is None:
            names = ", ".join(team.handoff_targets(source)) or "none"
            return Rejection(
                NOT_DECLARED,
                f"{source!r} has no route to {target!r}. You can hand off to: {names}.",
            )
        return self._check_target(team, agent, request, session)

    def _check_target(self, team: TeamView, agent: Agent, request: HandoffRequest,
                      session: SessionState, loops: bool = True) -> Rejection | None:
        target = agent.name
        source = request.source
        route = request.route
        if not agent.enabled or not request.route_enabled:
            return Rejection(
                TARGET_DISABLED,
                f"{target!r} is not available right now; continue yourself or choose "
                "another agent.",
            )
        if agent.system_only and source != team.supervisor:
            return Rejection(
                SYSTEM_ONLY,
                f"{target!r} can only be reached through the supervisor"
                + (f" {team.supervisor!r}." if team.supervisor else "."),
            )
        if route is not None and route.requires is not None:
            missing = route.required_capabilities.difference(agent.capabilities)
            if missing:
                return Rejection(
                    MISSING_CAPABILITY,
                    f"{target!r} lacks the required capabilities: "
                    f"{', '.join(sorted(missing))}.",
                )
        channel = session.channel
        if channel is not None and agent.channels is not None and channel not in agent.channels:
            return Rejection(
                CHANNEL_UNSUPPORTED,
                f"{target!r} does not serve the {channel!r} channel of this conversation.",
            )
        if loops and self.loop_limit > 0 and self._recent_count(
                session, target, request.line) >= self.loop_limit:
            return Rejection(
                LOOP_DETECTED,
                f"The conversation already went to {target!r} {self.loop_limit} times "
                "recently; answer the user yourself instead of handing off again.",
            )
        done = request.handoffs_this_turn
        if loops and done >= self.max_handoffs_per_turn:
            return Rejection(
                TOO_MANY_HANDOFFS,
                f"This turn already had {done} handoffs, the most allowed; "
                "answer the user yourself.",
            )
        if request.depth >= self.max_depth:
            return Rejection(
                TOO_DEEP,
                f"Delegations are nested {request.depth} deep, the most allowed; answer "
                "yourself.",
            )
        if request.payload_error is not None:
            return Rejection(
                INVALID_PAYLOAD,
                f"The handoff to {target!r} was refused: the arguments do not match the "
                f"schema. {request.payload_error} Call the tool again with corrected "
                "arguments.",
            )
        return None

    def check_plan_step(self, team: TeamView, source: str, target: str, session: SessionState
                        ) -> Rejection | None:
        """The rules for a plan step: a plan may assign any agent, routes or not."""
        agent = team.get(target)
        if agent is None:
            return Rejection(UNKNOWN_TARGET, f"There is no agent named {target!r}.")
        if agent.is_human:
            return Rejection(TARGET_DISABLED, f"{target!r} is a human; plans assign AI agents.")
        return self._check_target(team, agent, HandoffRequest(source, target), session,
                                  loops=False)

    def check_selection(self, team: TeamView, target: str, session: SessionState
                        ) -> Rejection | None:
        """The rules for a user picking an agent (`select_agent`)."""
        agent = team.get(target)
        if agent is None:
            names = ", ".join(a.name for a in team.agents
                              if self.check_selection(team, a.name, session) is None)
            return Rejection(UNKNOWN_TARGET, f"There is no agent named {target!r}. "
                             f"Selectable agents: {names or 'none'}.")
        if not agent.user_selectable:
            return Rejection(NOT_USER_SELECTABLE, f"{target!r} cannot be picked by the user.")
        if agent.system_only:
            return Rejection(SYSTEM_ONLY, f"{target!r} can only be reached through the "
                             "supervisor; the user cannot pick it.")
        if not agent.enabled:
            return Rejection(TARGET_DISABLED, f"{target!r} is not available right now.")
        channel = session.channel
        if channel is not None and agent.channels is not None and channel not in agent.channels:
            return Rejection(CHANNEL_UNSUPPORTED,
                             f"{target!r} does not serve the {channel!r} channel.")
        if self.person_keeps_conversation:
            holder = team.get(session.active_agent or "")
            if holder is not None and holder.is_human and holder.name != target:
                return Rejection(HELD_BY_PERSON, f"{holder.label} (a person) is handling "
                                 "this conversation; only they can hand it back.")
        return None


    def _recent_count(self, session: SessionState, target: str, line: str | None) -> int:
        """How many of the last `loop_window` accepted transfers in scope went to `target`.

        Transfers made inside a delegation belong to that delegation's line (their
        record's `extra["line"]`) and count only there."""
        window = self.loop_window
        if self.loop_scope == "session" and line is None:
            from .history import accepted_targets

            return accepted_targets(session)[-window:].count(target)
        # Records only grow, turn numbers with them: this turn's are at the end. A
        # delegation's line lives within one turn, whatever the scope.
        turn = session.turn
        seen = count = 0
        for r in reversed(session.handoffs):
            if r.turn != turn:
                break
            if r.accepted and not r.returns and (
                    (r.extra.get("line") if r.extra else None) == line):
                if r.target == target:
                    count += 1
                seen += 1
                if seen == window:
                    break
        return count
