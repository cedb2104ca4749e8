"""The state of one turn: its events (numbered, held back until stored), its records,
counters and usage, and the helpers that read and write them.

The state layer: the decisions (`runtime.decisions`) and the driver
(`runtime.driver`) read and write the turn through these objects; what the turn needs
of the outside (its runner's settings, the effects executor) is named by the protocols
of `state.host`, so nothing here imports a layer above.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from ...core.events import Event
from ...core.guardrails import GuardrailCheck
from ...core.handoff import HandoffRecord
from ...core.history import last_user_index, render_full
from ...core.messages import Message, UserMessage
from ...core.session import SessionState
from ...core.team import Route, Team
from ...models.base import Model, Usage
from .host import Executor, Host
from .leg import Fail, Leg
from .result import RunError, RunResult, RunStatus

if TYPE_CHECKING:
    import asyncio

    from ...core import event_data as ed
    from .context import TurnContext

TURN_EVENTS = 1 << 20
"""How many event numbers a turn may use: the next turn after one that died starts this
far past the last stored number, beyond any the dead turn may have shown."""


class EventLog:
    """A turn's events as it emitted them: what its `RunResult` and the memory store keep
    once the turn is over, without the turn itself. An event is kept as its parts until
    someone reads it as an `Event` (built once, then kept)."""

    __slots__ = ("built", "raw", "seq0", "sid", "turn")

    def __init__(self, sid: str, turn: int, seq0: int) -> None:
        self.sid = sid
        self.turn = turn
        """The turn's number, as it was when the turn ran (the session's moves on)."""
        self.seq0 = seq0
        """The number of the turn's first event; event `i` is `seq0 + i`."""
        self.raw: list[Event | tuple[str, float, dict[str, Any], Any]] = []
        self.built = 0

    @property
    def events(self) -> list[Event]:
        """Every event so far, as `Event` objects (built once, on first use)."""
        raw = self.raw
        if self.built < len(raw):
            sid, turn, seq0 = self.sid, self.turn, self.seq0
            for i in range(self.built, len(raw)):
                item = raw[i]
                if not isinstance(item, Event):
                    raw[i] = Event(item[0], sid, turn, item[1], item[2], item[3], seq0 + i)
            self.built = len(raw)
        return raw  # type: ignore[return-value]


class Turn:
    """The mutable state of one turn: events, records, counters, usage."""

    __slots__ = ("accepted", "asker", "checks", "client", "context", "deadline", "feed", "forced",
                 "fx", "grace", "kept", "log", "max_steps", "models", "now", "obs", "owner",
                 "raw", "records", "recovered", "refusals", "repeats", "runner", "seq0", "sink",
                 "state", "steps", "stopping", "stored", "streaming", "team", "usage",
                 "usage_by_agent", "usage_by_model", "user_index")

    def __init__(self, runner: Host, state: SessionState, context: Any,
                 sink: Callable[[Event], None] | None, feed: Any = None) -> None:
        self.runner = runner
        """The runner's settings and parts (`state.host.Host`)."""
        self.fx: Executor = runner.executor
        """The effects executor: the clock, ids, model and tool calls (`state.host`)."""
        self.now: Callable[[], float] = self.fx.now
        """The executor's clock (read for every event)."""
        self.team: Team = runner.team
        self.models: dict[str, Model | None] = runner.agent_models
        self.max_steps = runner.max_steps
        self.state = state
        self.kept: TurnContext | None = None
        """The team's typed context for this turn (None: the team declares none)."""
        if self.team.context_type is not None:
            from .context import TurnContext  # here: a team without one never loads it

            self.kept = TurnContext(self.team.context_type, state, context)
            context = self.kept.value
        self.context = context
        """What the turn's code gets as `ctx.context`: the typed context, else the
        caller's `run(context=...)`."""
        self.feed = feed
        """`runner.stream`'s reader (`driver.feed.Feed`): events go to its list
        (`feed.events`); it is woken (`feed.wake()`) when it sleeps (`feed.waiter`)."""
        if feed is not None:
            sink = feed.events.append
        self.sink = sink
        self.streaming = sink is not None
        self.log = EventLog(state.id, state.turn, state.event_seq)
        """The turn's events (what outlives the turn: `RunResult.events`, a store's log)."""
        self.raw = self.log.raw
        self.seq0 = self.log.seq0
        """The number of the turn's first event; event `i` is `seq0 + i`."""
        self.stored = 0
        """How many of the turn's events a commit has stored already."""
        self.records: list[HandoffRecord] = []
        self.accepted = 0
        self.steps = 0
        self.recovered = False
        self.usage = Usage()
        self.usage_by_agent: dict[str, Usage] = {}
        self.usage_by_model: dict[str, Usage] = {}
        """Per model name (the provider's, else the adapter's): what a price table prices."""
        self.owner: asyncio.Task[Any] | None = None
        """The task running the turn's main line (what `runner.cancel` cancels)."""
        self.stopping = False
        """True once `runner.cancel` stopped the turn: its CancelledError ends the turn."""
        self.forced: frozenset[str] | set[str] = frozenset()
        """Agents that made the call their forcing `tool_choice` asked for, this turn."""
        self.user_index = -1
        """Where this turn's user message is in the transcript (-1: look it up)."""
        self.deadline: float | None = None
        """The event-loop time the turn must end by (None: no turn-wide limit)."""
        self.grace = 0.0
        """Seconds the fallback gets at least when it takes over a timed turn."""
        self.repeats: dict[tuple[str, str], list[list[Any]]] | None = None
        """Ordinary tool calls of this turn by (agent, tool): each one's arguments, first
        result and count (`HandoffPolicy.repeated_tool_calls`; kept by `driver.tools`)."""
        self.refusals: list[str] = []
        """The sentences refused handoffs gave models this turn (an answer that repeats
        one to the user is not delivered: `runtime.converge`)."""
        self.client: dict[str, Any] | None = None
        """The client's tools offered this turn, by name (`core.client_tools`: their calls
        wait for the client's result); None: the client offers none."""
        self.asker: Callable[[Any, str, Any], Any] | None = None
        """`ctx.ask` of this turn's contexts (set by the driver: `driver.guardrails`)."""
        self.checks: list[GuardrailCheck] | None = None
        """Every guardrail verdict of the turn, in order (`RunResult.guardrails`); None
        until the first."""
        self.obs: Any = None
        """The telemetry observer when this turn is traced or measured (`telemetry.observe`),
        which then sits in front of `sink` and wraps `models`."""

    @overload
    def emit(self, type_: Literal["run_started"], data: ed.RunStarted) -> None: ...
    @overload
    def emit(self, type_: Literal["agent_started"], data: ed.AgentStarted) -> None: ...
    @overload
    def emit(self, type_: Literal["text_delta"], data: ed.TextDelta) -> None: ...
    @overload
    def emit(self, type_: Literal["message"], data: ed.Message) -> None: ...
    @overload
    def emit(self, type_: Literal["tool_called"], data: ed.ToolCalled) -> None: ...
    @overload
    def emit(self, type_: Literal["tool_result"], data: ed.ToolResult) -> None: ...
    @overload
    def emit(self, type_: Literal["tool_progress"], data: ed.ToolProgress) -> None: ...
    @overload
    def emit(self, type_: Literal["custom_event"], data: ed.CustomEvent) -> None: ...
    @overload
    def emit(self, type_: Literal["handoff_requested"], data: ed.HandoffRequested) -> None: ...
    @overload
    def emit(self, type_: Literal["handoff_rejected"], data: ed.HandoffRejected) -> None: ...
    @overload
    def emit(self, type_: Literal["agent_handoff"], data: ed.AgentHandoff) -> None: ...
    @overload
    def emit(self, type_: Literal["agent_changed"], data: ed.AgentChanged) -> None: ...
    @overload
    def emit(self, type_: Literal["agent_returned"], data: ed.AgentReturned) -> None: ...
    @overload
    def emit(self, type_: Literal["guardrail_checked"], data: ed.GuardrailChecked) -> None: ...
    @overload
    def emit(self, type_: Literal["guardrail_tripped"], data: ed.GuardrailTripped) -> None: ...
    @overload
    def emit(self, type_: Literal["human_waiting"], data: ed.HumanWaiting) -> None: ...
    @overload
    def emit(self, type_: Literal["approval_requested"], data: ed.ApprovalRequested) -> None: ...
    @overload
    def emit(self, type_: Literal["approval_decided"], data: ed.ApprovalDecided) -> None: ...
    @overload
    def emit(self, type_: Literal["remote_status"], data: ed.RemoteStatus) -> None: ...
    @overload
    def emit(self, type_: Literal["plan_step_started"], data: ed.PlanStepStarted) -> None: ...
    @overload
    def emit(self, type_: Literal["plan_step_completed"], data: ed.PlanStepCompleted) -> None: ...
    @overload
    def emit(self, type_: Literal["max_steps_reached"], data: ed.MaxStepsReached) -> None: ...
    @overload
    def emit(self, type_: Literal["agent_nudged"], data: ed.AgentNudged) -> None: ...
    @overload
    def emit(self, type_: Literal["answer_truncated"], data: ed.AnswerTruncated) -> None: ...
    @overload
    def emit(self, type_: Literal["run_interrupted"], data: ed.RunInterrupted) -> None: ...
    @overload
    def emit(self, type_: Literal["context_changed"], data: ed.ContextChanged) -> None: ...
    @overload
    def emit(self, type_: Literal["model_request"], data: ed.ModelRequest) -> None: ...
    @overload
    def emit(self, type_: Literal["model_response"], data: ed.ModelResponse) -> None: ...
    @overload
    def emit(self, type_: Literal["run_completed"], data: ed.RunCompleted, result: RunResult,
             held: bool = False) -> None: ...
    @overload
    def emit(self, type_: Literal["run_failed"], data: ed.RunFailed, result: RunResult,
             held: bool = False) -> None: ...
    def emit(self, type_: str, data: Any, result: Any = None, held: bool = False) -> None:
        """Make the event `type_` with the fields `data` (its `core.event_data` class,
        which mypy checks at every call), number it and keep it, and tell whoever listens.

        `held` (a terminal event, `finish`): kept and told to telemetry, which ends its
        spans now (their ids are stored with the event), but not to the reader: `deliver`
        sends it once the turn is stored, so no client hears "completed" of a turn the
        store does not hold."""
        sink = self.sink
        if sink is None:
            # Nobody is listening now, telemetry neither: keep the parts, build Event
            # objects on demand.
            self.raw.append((type_, self.now(), data, result))
            return
        state = self.state
        raw = self.raw
        e = Event(type_, state.id, state.turn, self.now(), data, result, self.seq0 + len(raw))
        raw.append(e)
        if held:
            obs = self.obs
            if obs is not None:  # telemetry alone, without the reader behind it
                reader, obs.sink = obs.sink, None
                try:
                    obs.on_event(e)
                finally:
                    obs.sink = reader
            return
        sink(e)
        feed = self.feed
        if feed is not None and feed.waiter is not None:
            feed.wake()

    @property
    def events(self) -> list[Event]:
        """Every event so far, as `Event` objects (built once, on first use)."""
        return self.log.events

    @property
    def lazy_events(self) -> Sequence[Event]:
        """The events no commit stored yet, as a sequence that builds `Event` objects only
        if read (the memory store never reads them; durable stores do)."""
        return _LazyEvents(self.log, self.stored)

    def attach(self, sink: Callable[[Event], None] | None, feed: Any) -> None:
        """Give a turn made without a reader (`driver.restart`) its reader, once its
        first commit stored what it did so far: the reader gets those events now."""
        if feed is not None:
            sink = feed.events.append
        self.feed = feed
        self.sink = sink
        self.streaming = sink is not None
        if sink is not None:
            for e in self.events:
                sink(e)
            if feed is not None:
                feed.wake()

    @property
    def listener(self) -> Callable[[Event], None] | None:
        """Who hears the turn's events live (`run(on_event=)`, a stream's feed), telemetry
        aside: when the turn is traced, the sink behind its observer."""
        obs = self.obs
        return self.sink if obs is None else obs.sink

    def deliver(self) -> None:
        """Send the held terminal event to the reader (the turn is stored)."""
        user = self.listener
        if user is None:
            return
        e = self.raw[-1]
        assert isinstance(e, Event)
        user(e)
        feed = self.feed
        if feed is not None and feed.waiter is not None:
            feed.wake()

    def failed_live(self, fail: Fail) -> RunResult | None:
        """The turn could not be stored (a failed commit, a lost lock): its reader gets
        `run_failed` with the store's code instead of the held terminal event. Nothing of
        it is stored. None when nobody reads the turn live."""
        if self.listener is None:
            return None
        res = failed(self, fail)
        res.bind_events(self.log)
        raw = self.raw
        if raw and isinstance(raw[-1], Event) and raw[-1].is_terminal:
            raw.pop()  # held, never sent: its number goes to the failure
        state = self.state
        err = res.error
        assert err is not None
        e = Event("run_failed", state.id, state.turn, self.now(), {
            "status": res.status, "agent": res.agent, "code": err.code,
            "message": err.message}, res, self.seq0 + len(raw))
        raw.append(e)
        self.deliver()
        return res

    def look(self, agent: str) -> None:
        """Emit `context_changed` for the typed context's fields changed since the last
        look (after each batch of tool calls, and when the turn ends), by `agent`."""
        kept = self.kept
        if kept is not None:
            changed = kept.changes()
            if changed:
                self.emit("context_changed", {"agent": agent, "changed": changed})

    def add_record(self, record: HandoffRecord) -> None:
        self.records.append(record)
        self.state.handoffs.append(record)
        if record.accepted:
            self.accepted += 1


def append(t: Turn, leg: Leg, message: Message) -> None:
    """Add a message to the leg's line: the session transcript, or a delegate's own list."""
    if leg.main:
        t.state.messages.append(message)
    else:
        leg.sub.append(message)
        r = render_full(message)
        if r is not None:
            leg.rendered.append(r)


def history_of(route: Route, t: Turn) -> Any:
    """The history view of `route`: its own, else the runner's default (`own_tools`)."""
    h = route.handoff.history
    return h if h is not None else t.runner.history


def turn_text(t: Turn) -> str:
    """The user's message of this turn (the one a handoff target inherits)."""
    messages = t.state.messages
    i = t.user_index if t.user_index >= 0 else last_user_index(messages)
    m = messages[i] if i < len(messages) else None
    return m.text if isinstance(m, UserMessage) else ""


def result(t: Turn, output: str, agent: str, status: RunStatus,
           error: RunError | None = None, data: Any = None) -> RunResult:
    """The turn's result so far (records and usage are the turn's own lists)."""
    return RunResult(t.state.id, output, agent, status, t.state.turn, t.records, error,
                     t.usage, t.usage_by_agent, output_data=data,
                     usage_by_model=t.usage_by_model, guardrails=t.checks or ())


def failed(t: Turn, fail: Fail) -> RunResult:
    return result(t, "", fail.agent, RunStatus.FAILED,
                  RunError(fail.code, fail.message, fail.agent, fail.exception))


def finish(t: Turn, res: RunResult) -> None:
    """Bind the events to the result and make the terminal event, held back from the
    reader until the turn is stored (`Turn.deliver`).

    The typed context's changes are the session's from here on, unless the turn failed:
    then its fields go back to the stored values, and `context_changed` (`reverted`)
    says so."""
    kept = t.kept
    if kept is not None:
        t.look(res.agent)
        if res.status is RunStatus.FAILED:
            back = kept.reverted()
            if back:
                t.emit("context_changed", {"agent": res.agent, "changed": back,
                                           "reverted": True})
        elif kept.seen != kept.stored:
            t.state.context = kept.seen
    res.bind_events(t.log)
    # `held` passed by position: a keyword call leaves the interpreter's fast path and
    # costs every turn about 1,400 instructions more (bench/instructions.py).
    if res.status is RunStatus.FAILED:
        err = res.error
        t.emit("run_failed", {
            "status": res.status, "agent": res.agent,
            "code": err.code if err else "error", "message": err.message if err else "",
            **spent(res)}, res, True)
    else:
        t.emit("run_completed", {"status": res.status, "agent": res.agent,
                                 "output": res.output, **spent(res)}, res, True)


def spent(res: RunResult) -> ed.Spent:
    """A terminal event's `usage` and `usage_by_model` (none for a turn without a model
    call), so the store's log says what each turn cost (`handoffs stats --prices`)."""
    if not res.usage.requests:
        return {}
    return {"usage": res.usage.to_dict(),
            "usage_by_model": {k: v.to_dict() for k, v in res.usage_by_model.items()}}


class _LazyEvents(Sequence[Event]):
    __slots__ = ("_log", "_start")

    def __init__(self, log: EventLog, start: int = 0) -> None:
        self._log = log
        self._start = start
        """The first of the turn's events this holds (earlier ones are stored)."""

    def __len__(self) -> int:
        return len(self._log.raw) - self._start

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        events = self._log.events
        return events[index] if not self._start else events[self._start:][index]

    def __iter__(self) -> Iterator[Event]:
        events = self._log.events
        return iter(events if not self._start else events[self._start:])

    def last(self) -> tuple[str, float, int, dict[str, Any]] | None:
        """`parts()` of the last event only (None: no event)."""
        raw = self._log.raw
        if len(raw) <= self._start:
            return None
        item = raw[-1]
        if isinstance(item, Event):
            return item.type, item.at, item.turn, item.data
        return item[0], item[1], self._log.turn, item[2]

    def parts(self) -> Iterator[tuple[str, float, int, dict[str, Any]]]:
        """(type, at, turn, data) of each event, without building `Event` objects (for a
        store that reads a few fields of a turn's events, as the memory store's stats)."""
        turn = self._log.turn
        raw = self._log.raw
        for item in raw if not self._start else raw[self._start:]:
            if isinstance(item, Event):
                yield item.type, item.at, item.turn, item.data
            else:
                yield item[0], item[1], turn, item[2]
