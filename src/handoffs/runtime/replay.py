"""`runner.replay`: play a stored conversation again from a turn, on another team or model,
and compare where each turn went (issue 31).

The session is forked before the turn (`runtime.timetravel`), so the original stays as
it was, and the original user messages of that turn and the later ones are sent again,
one turn each, through a runner on the new team and model. Each of its models is wrapped
by the evaluation's `Recorder`, which measures every request (its size as the adapter
sends it, the tokens reported). Per turn, the original and the new answering agent,
handoff records and answer are set side by side, and the routing is compared:

- `same`: the same agent answered, after the same handoffs (source, target, accepted);
- `different agent`: another agent answered;
- `different path`: the same agent answered, by other handoffs.

With the same scripted model, a replay reproduces the original's records and answers.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..core.handoff import HandoffRecord
from ..core.messages import AssistantMessage, UserMessage
from ..core.session import SessionState
from ..errors import HandoffsError
from ..stores.checks import MAX_ID_LENGTH
from ..stores.marks import TurnMark
from .timetravel import fork, marked

if TYPE_CHECKING:
    from ..core.team import Team
    from ..models.base import Model
    from .state.host import Host

SAME = "same"
DIFFERENT_AGENT = "different agent"
DIFFERENT_PATH = "different path"


@dataclass(slots=True, frozen=True)
class ReplayHandoff:
    """One handoff request of a turn, as the routing diff compares it."""

    source: str
    target: str
    reason: str
    """How it was asked (`llm`, `programmatic`, `user_request`, ...)."""
    accepted: bool
    code: str | None = None
    """Why it was refused (None: accepted)."""
    explanation: str = ""
    """The reason the model gave, in its words."""

    @classmethod
    def of(cls, r: HandoffRecord) -> ReplayHandoff:
        """The comparable part of a handoff record."""
        return cls(r.source, r.target, str(r.reason.value), r.accepted, r.rejection,
                   r.explanation)

    def to_dict(self) -> dict[str, Any]:
        """The handoff as JSON-ready data."""
        return {"source": self.source, "target": self.target, "reason": self.reason,
                "accepted": self.accepted, "code": self.code,
                "explanation": self.explanation}


@dataclass(slots=True, frozen=True)
class ReplaySide:
    """What happened in one turn, originally or in the replay."""

    agent: str | None
    """The agent that answered (None: nobody did)."""
    answer: str
    """Its answer (empty when there was none)."""
    handoffs: tuple[ReplayHandoff, ...] = ()
    status: str = "completed"
    """How the turn ended (`completed`, `handed_off`, `waiting_for_human`, ... or the
    code of the error that kept it from being played)."""

    @property
    def path(self) -> tuple[tuple[str, str, bool], ...]:
        """The handoffs as routing sees them: source, target, accepted."""
        return tuple((h.source, h.target, h.accepted) for h in self.handoffs)

    @property
    def hops(self) -> str:
        """The path as people read it: `triage → billing` (a refused handoff as
        `✗billing`), the agent alone when there was no handoff, else the status."""
        hops: list[str] = []
        for h in self.handoffs:
            if not hops:
                hops.append(h.source)
            hops.append(h.target if h.accepted else f"✗{h.target}")
        if self.agent is not None and (not hops or hops[-1] != self.agent):
            hops.append(self.agent)
        return " → ".join(hops) if hops else (self.status or "-")

    def to_dict(self) -> dict[str, Any]:
        """The side as JSON-ready data."""
        return {"agent": self.agent, "answer": self.answer, "status": self.status,
                "handoffs": [h.to_dict() for h in self.handoffs]}


@dataclass(slots=True, frozen=True)
class ReplayTurn:
    """One turn played again: its user message, both sides, and how the routing differs."""

    turn: int
    text: str
    """The user's message, as it was sent originally and again."""
    original: ReplaySide
    new: ReplaySide

    @property
    def routing(self) -> str:
        """`same`, `different agent` or `different path` (see the module)."""
        if self.original.agent != self.new.agent:
            return DIFFERENT_AGENT
        return SAME if self.original.path == self.new.path else DIFFERENT_PATH

    def to_dict(self) -> dict[str, Any]:
        """The turn as JSON-ready data, its `routing` included."""
        return {"turn": self.turn, "text": self.text, "routing": self.routing,
                "original": self.original.to_dict(), "new": self.new.to_dict()}


@dataclass(slots=True)
class ReplayTotals:
    """What the replay's model calls cost."""

    model_calls: int = 0
    """Requests sent to the replay's models."""
    prompt_bytes: int = 0
    """The requests' sizes, as each adapter sends them (`eval.recording.request_bytes`)."""
    input_tokens: int = 0
    """As the providers reported them (0 when they did not)."""
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        """Input plus output tokens (0 when the provider reported none)."""
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, int]:
        """The totals as JSON-ready data, `tokens` included."""
        return {"model_calls": self.model_calls, "prompt_bytes": self.prompt_bytes,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "tokens": self.tokens}


@dataclass(slots=True)
class Replay:
    """A conversation played again from `from_turn` (`runner.replay`)."""

    session_id: str
    """The original session (unchanged)."""
    replay_id: str
    """The fork the turns were played in (kept, to read or fork again)."""
    from_turn: int
    turns: list[ReplayTurn] = field(default_factory=list)
    """Each turn played again, in order."""
    totals: ReplayTotals = field(default_factory=ReplayTotals)
    """What the replay's model calls cost."""
    stopped: str | None = None
    """Why the replay stopped before the last turn (None: every turn was played)."""

    @property
    def same(self) -> bool:
        """True when every turn was routed as it was originally."""
        return self.stopped is None and all(t.routing == SAME for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        """The replay as JSON-ready data (`handoffs replay --json`, the server's route)."""
        return {"session_id": self.session_id, "replay_id": self.replay_id,
                "from_turn": self.from_turn, "same": self.same, "stopped": self.stopped,
                "turns": [t.to_dict() for t in self.turns],
                "totals": self.totals.to_dict()}


async def replay(runner: Host, session_id: str, from_turn: int, team: Team | None = None,
                 model: Model | str | None = None, drop: Collection[str] = ()) -> Replay:
    """Fork `session_id` before `from_turn` and play its user messages again (module);
    `drop`: metadata keys the replay's fork does not keep (`timetravel.fork`)."""
    from ..eval.recording import recording

    original = await runner.store.load(session_id)
    if original is None:
        raise HandoffsError(f"There is no session {session_id!r}.", code="unknown_session")
    turns = _original_turns(original, await marked(runner.store).turn_marks(session_id),
                            from_turn)
    target = f"{session_id[:MAX_ID_LENGTH - 16]}-replay-{uuid.uuid4().hex[:8]}"
    await fork(runner.store, session_id, from_turn, target, drop)
    again = _replayer(runner, team, model)
    out = Replay(session_id, target, from_turn)
    with recording() as calls:
        for n, text, side in turns:
            try:
                result = await again.run(target, text)
            except HandoffsError as exc:
                out.turns.append(ReplayTurn(n, text, side, ReplaySide(None, "", (), exc.code)))
                out.stopped = f"turn {n}: {exc}"
                break
            new = ReplaySide(result.agent, result.output,
                             tuple(ReplayHandoff.of(r) for r in result.handoffs),
                             result.status.value)
            out.turns.append(ReplayTurn(n, text, side, new))
    for c in calls:
        out.totals.model_calls += 1
        out.totals.prompt_bytes += c.prompt_bytes
        if c.usage is not None:
            out.totals.input_tokens += c.usage.input_tokens
            out.totals.output_tokens += c.usage.output_tokens
    return out


def _replayer(runner: Host, team: Team | None, model: Model | str | None) -> Host:
    """A runner on the same store for the new team and model, each model recorded."""
    from ..eval.recording import Recorder
    from ..models.registry import get_model

    new_team = team if team is not None else runner.team
    again = type(runner).from_config(
        new_team, replace(runner.config, telemetry=False),
        model=model if model is not None else runner.model, store=runner.store,
        executor=runner.executor)
    forced = get_model(model) if isinstance(model, str) else model
    for agent in new_team.agents:
        if agent.is_human:
            continue
        if forced is not None:
            inner: Model | None = forced
        elif team is None:  # the runner's own models, as it resolved or was given them
            inner = runner.model_for(agent.name)
        else:
            inner = again.model_for(agent.name)
        if inner is not None:
            again.agent_models[agent.name] = Recorder(inner)
    return again


def _original_turns(state: SessionState, marks: list[TurnMark], from_turn: int
                    ) -> list[tuple[int, str, ReplaySide]]:
    """Turns `from_turn`.. of the stored session: the user's text and what happened."""
    from ..eval.sessions import answered_by, moves_of  # the same rule as eval's cases

    if (not isinstance(from_turn, int) or isinstance(from_turn, bool)
            or not 1 <= from_turn <= state.turn):
        raise HandoffsError(f"Session {state.id!r} has turns 1 to {state.turn}; replay from "
                            f"one of them, not {from_turn!r}.", code="invalid_turn")
    starts = {m.turn: m.messages for m in marks}
    missing = [n for n in range(from_turn, state.turn + 1) if n not in starts]
    if missing:
        raise HandoffsError(
            f"Session {state.id!r} has no record of where turn {missing[0]} began (stored "
            "by a handoffs older than time travel); replay from a later turn.",
            code="turn_not_recorded")
    out = []
    for n in range(from_turn, state.turn + 1):
        part = state.messages[starts[n]:starts.get(n + 1, len(state.messages))]
        users = [m for m in part if isinstance(m, UserMessage)]
        if not users:  # an operator's turn (a human's reply): nothing to send again
            continue
        records = [r for r in state.handoffs if r.turn == n]
        answers = [m for m in part if isinstance(m, AssistantMessage) and m.text.strip()]
        side = ReplaySide(answered_by(part, moves_of(records)) or users[-1].agent,
                          answers[-1].text if answers else "",
                          tuple(ReplayHandoff.of(r) for r in records))
        out.append((n, users[-1].text, side))
    return out


