"""Stored traffic played again: the user messages of many stored sessions replayed on
another model or team version, and where the answering agent differs, turn by turn, at
dataset scale (`handoffs eval --from-store URL --since 7d --model M2`).

A team checks a model upgrade against its production conversations before shipping it.
The source store is only read (`list_sessions`, `load`, `turn_marks`): each session is
copied into a scratch store (a memory store, emptied as the replay goes, unless one is
given to keep the replays) and played again there from its first turn by
`runner.replay`, the routing diff of `handoffs replay`. Nothing is written where the
sessions came from; a read-only URL (`sqlite:///file:/path/prod.db?mode=ro`) makes the
database itself refuse any write.

Left out, with the reason in `TrafficReplay.skipped`: sessions with a turn running now
(their last turn is not finished), copies made by going back (forks and rewinds: they
repeat their originals), sessions without a user turn, and sessions stored before turn
marks existed (`turn_not_recorded`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.team import Team
from ..errors import HandoffsError
from ..runtime.replay import DIFFERENT_AGENT, DIFFERENT_PATH, SAME, Replay, ReplayTotals, ReplayTurn
from ..runtime.timetravel import marked

if TYPE_CHECKING:
    from ..models.base import Model
    from ..runtime.runner import Runner
    from ..stores.base import SessionStore

log = logging.getLogger("handoffs.eval")

PAGE = 200
"""Sessions listed per call while choosing which to replay."""
ROUTINGS = (SAME, DIFFERENT_AGENT, DIFFERENT_PATH)
"""How a replayed turn's routing compares with the original's (`runtime.replay`)."""
COPIES = ("forked_from", "rewound_from")
"""Metadata keys of a session made by going back in another (`runtime.timetravel`)."""
NOBODY = "(nobody)"
"""The agent column of a turn nobody answered (it failed, or could not be played)."""


@dataclass(slots=True, frozen=True)
class Skipped:
    """A stored session that was not replayed, and why."""

    session: str
    """The stored session's id."""
    code: str
    """`running`, `copy`, `no_turn`, `turn_not_recorded`, `unknown_session`, or the code
    of the error that kept it from being played."""
    message: str
    """Why, in words."""

    def to_dict(self) -> dict[str, str]:
        """The session, code and message as JSON-ready data."""
        return {"session": self.session, "code": self.code, "message": self.message}


@dataclass(slots=True)
class TrafficReplay:
    """Every replayed session's routing diff (`Replay`), and what they add up to; as
    text and HTML with `eval.traffic_render` (`traffic_text`, `traffic_html`)."""

    model: str
    """The model the replays ran on, as named."""
    source: str
    """Where the sessions came from (a URL with any password masked, or the store's name)."""
    replays: list[Replay] = field(default_factory=list)
    """One per replayed session, most recently updated first."""
    skipped: list[Skipped] = field(default_factory=list)
    """The sessions listed but not replayed, each with why."""
    since: float | None = None
    """The window's start (Unix time; None: unbounded)."""
    until: float | None = None
    """The window's end, exclusive (None: unbounded)."""
    seconds: float = 0.0
    """Wall time of the whole replay."""

    @property
    def turns(self) -> list[tuple[str, ReplayTurn]]:
        """Every replayed turn with its session's id, session by session."""
        return [(r.session_id, t) for r in self.replays for t in r.turns]

    def routing(self) -> Counter[str]:
        """Turns by how their routing compares (`same`, `different agent`, `different
        path`)."""
        return Counter(t.routing for _, t in self.turns)

    def same_agent(self) -> int:
        """How many replayed turns the same agent answered as originally (by the same
        path or not)."""
        return sum(t.routing != DIFFERENT_AGENT for _, t in self.turns)

    @property
    def agreement(self) -> float:
        """Share of replayed turns answered by the same agent as originally (0.0 for
        none): the figure `--min-accuracy` holds the replay to."""
        turns = len(self.turns)
        return self.same_agent() / turns if turns else 0.0

    def differing(self) -> list[tuple[str, ReplayTurn]]:
        """The turns routed otherwise than originally, session by session."""
        return [(s, t) for s, t in self.turns if t.routing != SAME]

    def matrix(self) -> dict[str, Counter[str]]:
        """The agent that answered originally (row) × the one that answers now (column),
        `(nobody)` for a turn nobody answered → turns."""
        rows: dict[str, Counter[str]] = {}
        for _, t in self.turns:
            rows.setdefault(t.original.agent or NOBODY, Counter())[t.new.agent or NOBODY] += 1
        return rows

    def totals(self) -> ReplayTotals:
        """What the replays' model calls cost, summed over sessions."""
        out = ReplayTotals()
        for r in self.replays:
            out.model_calls += r.totals.model_calls
            out.prompt_bytes += r.totals.prompt_bytes
            out.input_tokens += r.totals.input_tokens
            out.output_tokens += r.totals.output_tokens
        return out

    def to_dict(self, detail: str = "differing") -> dict[str, Any]:
        """The figures, and the turns: `detail="differing"` (default) lists the turns
        routed otherwise, `"all"` every replayed turn, `"none"` none."""
        routing = self.routing()
        turns = self.turns
        d: dict[str, Any] = {
            "model": self.model, "source": self.source, "since": self.since,
            "until": self.until, "sessions": len(self.replays),
            "sessions_same": sum(r.same for r in self.replays), "turns": len(turns),
            "routing": {k: routing.get(k, 0) for k in ROUTINGS},
            "same_agent": self.same_agent(), "agreement": self.agreement,
            "matrix": {row: dict(cols) for row, cols in self.matrix().items()},
            "skipped": [s.to_dict() for s in self.skipped],
            "stopped": {r.session_id: r.stopped for r in self.replays if r.stopped},
            **self.totals().to_dict(), "seconds": self.seconds}
        if detail != "none":
            chosen = turns if detail == "all" else self.differing()
            d["turns_replayed"] = [{"session": s, **t.to_dict()} for s, t in chosen]
        return d


Progress = Callable[[int, int], None]
"""Called after each session with (sessions done, sessions to do)."""


async def replay_traffic(
    source: SessionStore | str,
    target: Team | Runner,
    *,
    model: Model | str | None = None,
    since: float | None = None,
    until: float | None = None,
    limit: int | None = None,
    sessions: Sequence[str] | None = None,
    scratch: SessionStore | str | None = None,
    concurrency: int = 4,
    progress: Progress | None = None,
    max_steps: int | None = None,
) -> TrafficReplay:
    """Replay the user messages of the sessions stored in `source` (a store or its URL)
    on `target` (a `Team`, or a `Runner` whose settings are kept) and compare, per turn,
    who answers now with who answered then (see the module).

    Which sessions: `sessions` (ids), else those updated in `[since, until)` (Unix
    times; None: unbounded), most recent first, at most `limit`. `model`: every agent's
    (a "provider:name" string, a `Model`, `"offline"`); None keeps the runner's, else
    HANDOFFS_MODEL, else each agent's own. `scratch`: where the replays are played and
    kept (default: a memory store, emptied session by session); it must not be
    `source`. `concurrency`: sessions replayed at once.
    """
    from ..stores.opening import open_store

    if concurrency < 1:
        raise HandoffsError("concurrency must be at least 1.", code="invalid_argument")
    if limit is not None and limit < 1:
        raise HandoffsError("limit must be at least 1.", code="invalid_argument")
    if scratch is not None and (scratch is source or (
            isinstance(scratch, str) and scratch == source)):
        raise HandoffsError("The replays cannot be played in the store they are read from; "
                            "give another scratch store (or none: a memory store).",
                            code="invalid_argument")
    runner, label = _runner(target, model, scratch, max_steps)
    owned = isinstance(source, str)
    store = open_store(source)
    started = time.perf_counter()
    out = TrafficReplay(label, _name(source), since=since, until=until)
    try:
        ids = list(sessions) if sessions is not None else await chosen(store, since, until,
                                                                       limit)
        gate = asyncio.Semaphore(concurrency)
        found: dict[int, Replay | Skipped] = {}

        async def one(i: int, sid: str) -> None:
            async with gate:
                found[i] = await _replay_one(store, runner, sid, keep=scratch is not None)
            if progress is not None:
                progress(len(found), len(ids))

        async with asyncio.TaskGroup() as group:
            for i, sid in enumerate(ids):
                group.create_task(one(i, sid))
        for i in range(len(ids)):
            got = found[i]
            if isinstance(got, Replay):
                out.replays.append(got)
            else:
                out.skipped.append(got)
    finally:
        if owned:
            await store.close()
        if scratch is None or isinstance(scratch, str):  # opened here: closed here
            await runner.store.close()
    out.seconds = time.perf_counter() - started
    return out


async def chosen(store: SessionStore, since: float | None, until: float | None,
                 limit: int | None) -> list[str]:
    """The ids of the sessions updated in `[since, until)`, most recent first, at most
    `limit` (the store lists sessions by last update, so the listing stops at `since`)."""
    ids: list[str] = []
    offset = 0
    while True:
        page = await store.list_sessions(limit=PAGE, offset=offset)
        for s in page:
            if since is not None and s.updated_at < since:
                return ids
            if until is None or s.updated_at < until:
                ids.append(s.id)
                if limit is not None and len(ids) >= limit:
                    return ids
        if len(page) < PAGE:
            return ids
        offset += PAGE


async def _replay_one(source: SessionStore, runner: Runner, sid: str, keep: bool
                      ) -> Replay | Skipped:
    """Copy one session into the runner's store (read from `source` only) and replay it
    from its first turn there; a `Skipped` when it cannot or should not be."""
    state = await source.load(sid)
    if state is None:
        return Skipped(sid, "unknown_session", "The session is no longer in the store.")
    if state.status == "running":
        return Skipped(sid, "running", "A turn of the session is running: its last turn "
                       "is not finished.")
    copy_of = next((k for k in COPIES if k in state.metadata), None)
    if copy_of is not None:
        return Skipped(sid, "copy", f"A copy made by going back ({copy_of}); its original "
                       "is replayed instead.")
    if state.turn < 1:
        return Skipped(sid, "no_turn", "The session has no user turn.")
    marks = await marked(source).turn_marks(sid)
    scratch = runner.store
    await scratch.import_session(state.to_dict(), replace=True)
    await marked(scratch).put_turn_marks(sid, marks)
    replay: Replay | None = None
    try:
        replay = await runner.replay(sid, 1)
        return replay
    except HandoffsError as exc:
        return Skipped(sid, exc.code, str(exc))
    except Exception as exc:
        log.warning("replaying session %s raised", sid, exc_info=True,
                    extra={"session_id": sid})
        return Skipped(sid, "exception", f"{type(exc).__name__}: {exc}")
    finally:
        if not keep:  # a memory store holds only the sessions being replayed
            await scratch.delete(sid)
            if replay is not None:
                await scratch.delete(replay.replay_id)


def _runner(target: Team | Runner, model: Model | str | None,
            scratch: SessionStore | str | None, max_steps: int | None
            ) -> tuple[Runner, str]:
    """The runner the replays run on (its store: `scratch`, else memory), and the model's
    name; refused with `no_model` when an agent would have none."""
    from ..runtime.runner import Runner
    from .run import OFFLINE

    team = target if isinstance(target, Team) else target.team
    base = None if isinstance(target, Team) else target
    spec: Any = model
    if spec is None:
        spec = base.model if base is not None else os.environ.get("HANDOFFS_MODEL") or None
    if isinstance(spec, str) and spec in OFFLINE:
        from ..cli.offline import offline_model

        resolved: Model | None = offline_model(team)
    elif isinstance(spec, str):
        from ..models.registry import get_model

        resolved = get_model(spec)  # once: the replays share its client
    else:
        resolved = spec
    if resolved is None:
        for agent in team.agents:
            if not agent.is_human and not agent.is_remote and agent.model is None:
                raise HandoffsError(
                    f"Agent {agent.name!r} has no model: pass model=... (`--model`; "
                    "\"offline\" for the offline rule-based model), set "
                    "Agent(model=...) or HANDOFFS_MODEL.", code="no_model")
    name = spec if isinstance(spec, str) else (
        type(spec).__name__ if spec is not None else "each agent's own model")
    runner = Runner(
        team, model=resolved, store=scratch if scratch is not None else "memory://",
        max_steps=max_steps or (base.max_steps if base is not None else 20),
        history=base.history if base is not None else None,
        turn_timeout=base.turn_timeout if base is not None else None,
        on_max_steps=base.on_max_steps if base is not None else None,
        max_message_chars=base.max_message_chars if base is not None else 1_000_000,
        telemetry=False)
    return runner, name


def _name(source: SessionStore | str) -> str:
    from ..cli.runners import describe_store  # a password never reaches a report

    return describe_store(source)
