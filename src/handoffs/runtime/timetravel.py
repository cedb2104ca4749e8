"""Going back in a session: `runner.fork` and `runner.rewind` (issue 31).

Both stand on the store's turn marks (`stores.marks`): every store keeps, when a user
turn starts, the session's header and row counts as they were just before. Messages,
records and events are append-only, so the session as it was loaded before turn N is
that header plus the first rows: exact, with nothing re-computed.

A fork is a new session holding that prefix, imported through the store's ordinary
`import_session`, with new handoff record ids (every place an old id appeared, the view,
the events, a pending approval, names the new one), its events renumbered from 0 and
naming the fork, and the marks of its own earlier turns, so it can be forked and
rewound in turn. `metadata["forked_from"]` on the fork and `metadata["forks"]` on the
original link them. Apart from those links, ids and event numbers, a fork's export is
byte-equal to the original's export taken just before turn N.

A rewind cuts the session itself back to before turn N, under its lock. What it cuts is
not lost: the whole session as it stood is first kept as a fork named in
`metadata["rewinds"]` (`kept_as`), and `undo_rewind` puts it back. Event numbers a
client saw are never given again.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from bisect import bisect_left
from collections.abc import Callable, Collection, Container, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from ..core.idempotency import FIELD, fingerprint, remember, seen
from ..core.session import SessionState
from ..errors import HandoffsError
from ..log import fields
from ..stores.checks import MAX_ID_LENGTH
from ..stores.edits import Held, edit_session, session_turn
from ..stores.features import EventLog
from ..stores.marks import MarkedStore, TurnMark, mark_of
from ..stores.rows import dumps
from .effects.ids import new_id as new_record_id

if TYPE_CHECKING:
    from ..core.idempotency import IdempotencyKey
    from ..stores.base import SessionStore

log = logging.getLogger("handoffs.runtime.timetravel")

PAGE = 1000
"""Events read per call while copying a session's events."""

LINKS = ("forked_from", "forks", "rewinds", "rewound_from")
FORK_KEY = "fork_key"
"""A fork made with an idempotency key keeps its hash here: a retry finds the fork."""
"""Metadata keys that link sessions made by going back; a fork does not inherit them."""


def marked(store: SessionStore) -> MarkedStore:
    """The store, if it keeps turn marks (every built-in store does)."""
    if not isinstance(store, MarkedStore):
        raise HandoffsError(
            f"{type(store).__name__} keeps no turn marks, so its sessions cannot be forked "
            "or rewound; use the memory, SQLite or PostgreSQL store.", code="not_supported")
    return store


async def fork(store: SessionStore, session_id: str, turn: int, new_id: str | None = None,
               drop: Collection[str] = (), metadata: Mapping[str, Any] | None = None,
               key: IdempotencyKey | None = None) -> SessionState:
    """A new session holding `session_id` as it was loaded before `turn` (see module);
    `drop`: metadata keys the fork does not keep (the server drops the customer's token,
    so an operator's fork is the operator's); `metadata`: keys the fork gets besides its
    link (the server's token of the fork's own, when a chat page is to continue it).
    `key`: the fork's idempotency key; the fork's id is made of it (unless `new_id`
    names one), and a retry finds the fork it made and returns it, making no other."""
    print_ = None
    if key is not None:
        print_ = fingerprint("fork", session_id, str(turn), key.key)
        if new_id is None:
            new_id = f"{session_id[:MAX_ID_LENGTH - 19]}-fork-{print_[-12:]}"
        made = await store.load(new_id)
        if made is not None and made.metadata.get(FORK_KEY) == print_:
            return made.snapshot()  # a retry: the fork it made the first time
    data, mark = await _prefix(store, session_id, turn, allow_end=True)
    target = new_id if new_id is not None else fork_id(session_id)
    at = time.time()
    marks = [m for m in await marked(store).turn_marks(session_id) if m.turn < turn]
    links = {"forked_from": {"session": session_id, "turn": turn, "at": at},
             **(metadata or {})}
    if print_ is not None:
        links[FORK_KEY] = print_
    copy = await copy_prefix(store, data, mark, marks, target, links, drop=drop)
    await link(store, session_id, "forks", {"session": target, "turn": turn, "at": at})
    log.info("session %s forked before turn %d as %s", session_id, turn, target,
             extra=fields(session_id, turn, None))
    return copy


async def rewind(store: SessionStore, session_id: str, turn: int,
                 running: Container[str] = (), key: IdempotencyKey | None = None
                 ) -> SessionState:
    """Cut the session back to before `turn`, keeping what was cut (see module);
    `running`: the sessions this process is running a turn on (refused at once).
    `key`: the rewind's idempotency key; a retry cuts nothing more and returns the
    session as it is."""
    if session_id in running:
        raise _busy(session_id)
    mstore = marked(store)
    before = await store.load(session_id)  # a turn of another process: refused, not awaited
    if before is not None:
        _check_still(before)

    async def cut_back(held: Held) -> SessionState:  # its write is the store's truncate
        state = held.state
        if key is not None:
            print_ = fingerprint("rewind", str(turn))
            if seen(state, key, print_, time.time()) is not None:
                return state.snapshot()  # a retry: rewound the first time
        _check_still(state, held=True)
        if not isinstance(turn, int) or isinstance(turn, bool) or not 1 <= turn <= state.turn:
            raise HandoffsError(
                f"Session {session_id!r} has turns 1 to {state.turn}; rewind to one of "
                f"them, not {turn!r}.", code="invalid_turn")
        marks = await mstore.turn_marks(session_id)
        mark = _find(marks, session_id, turn)
        data = await store.export_session(session_id)
        assert data is not None
        end = mark_of(state, state.turn + 1, state.event_seq)
        kept = _archive_id(session_id, len(state.metadata.get("rewinds", ())) + 1)
        at = time.time()
        await copy_prefix(store, data, end, marks, kept,
                          {"rewound_from": {"session": session_id, "turn": turn, "at": at}})
        header = mark.header_dict() or {"id": session_id}
        cut = SessionState.from_dict(header)
        cut.messages = state.messages[:mark.messages]
        cut.handoffs = state.handoffs[:mark.records]
        cut.version = state.version
        cut.event_seq = state.event_seq  # numbers already shown are never given again
        meta = {k: v for k, v in cut.metadata.items() if k not in LINKS}
        for name in ("forked_from", "forks", "rewound_from"):
            if name in state.metadata:
                meta[name] = state.metadata[name]
        meta["rewinds"] = [*state.metadata.get("rewinds", ()), {
            "turn": turn, "at": at, "kept_as": kept,
            "messages": len(state.messages) - mark.messages,
            "records": len(state.handoffs) - mark.records}]
        cut.metadata = meta
        if key is not None:  # on the cut session (whose keys are its turns'), with it
            remember(cut, key, print_, at)
        await mstore.truncate(cut, mark)
        log.info("session %s rewound to before turn %d; what was cut is kept as %s",
                 session_id, turn, kept, extra=fields(session_id, turn, None))
        return cut.snapshot()

    return await session_turn(store, session_id, cut_back, _missing)


async def undo_rewind(store: SessionStore, session_id: str, running: Container[str] = ()
                      ) -> SessionState:
    """Put back what the session's last rewind cut (its `kept_as` copy), links kept."""
    if session_id in running:
        raise _busy(session_id)
    state = await store.load(session_id)
    if state is None:
        raise _unknown(session_id)
    _check_still(state)
    rewinds = list(state.metadata.get("rewinds", ()))
    if not rewinds:
        raise HandoffsError(f"Session {session_id!r} was never rewound; nothing to undo.",
                            code="no_rewind")
    last = rewinds.pop()
    kept = str(last["kept_as"])
    data = await store.export_session(kept)
    if data is None:
        raise HandoffsError(f"The copy {kept!r} that rewind kept of session {session_id!r} "
                            "is gone (deleted?); the rewind cannot be undone.",
                            code="unknown_session")
    kept_state = await store.load(kept)
    assert kept_state is not None
    end = mark_of(kept_state, kept_state.turn + 1, kept_state.event_seq)
    links: dict[str, Any] = {k: state.metadata[k] for k in ("forked_from", "forks", "rewound_from")
             if k in state.metadata}
    if rewinds:
        links["rewinds"] = rewinds
    marks = await marked(store).turn_marks(kept)
    restored = await copy_prefix(store, data, end, marks, session_id, links, replace=True)
    await store.delete(kept)
    return restored


# -- the prefix and its copy -------------------------------------------------------------

async def _prefix(store: SessionStore, session_id: str, turn: int, allow_end: bool
                  ) -> tuple[dict[str, Any], TurnMark]:
    """The session's rows up to the mark of `turn`, and that mark (the session's end for
    the turn after its last, when `allow_end`). A recorded turn costs what its prefix
    costs: nothing past it is read."""
    mstore = marked(store)
    for m in await mstore.turn_marks(session_id):
        if m.turn == turn:
            messages, records = await mstore.read_prefix(session_id, m.messages, m.records)
            return {"id": session_id, "messages": messages, "handoffs": records}, m
    data = await store.export_session(session_id)
    if data is None:
        raise _unknown(session_id)
    last = int(data.get("turn", 0))
    if (not isinstance(turn, int) or isinstance(turn, bool)
            or not 1 <= turn <= last + int(allow_end)):
        raise HandoffsError(
            f"Session {session_id!r} has turns 1 to {last}; fork before one of them, or "
            f"at {last + 1} for all of it, not {turn!r}.", code="invalid_turn")
    if turn == last + 1:
        state = SessionState.from_dict(data)
        _check_still(state)
        n = await store.event_count(session_id) if isinstance(store, EventLog) else 0
        return data, mark_of(state, turn, n)
    return data, _find(await marked(store).turn_marks(session_id), session_id, turn)


async def copy_prefix(store: SessionStore, data: dict[str, Any], mark: TurnMark,
                      marks: list[TurnMark], target: str, links: dict[str, Any],
                      replace: bool = False, drop: Collection[str] = ()) -> SessionState:
    """Import the prefix of `data` up to `mark` as session `target`, with new record ids,
    the marks of its earlier turns, and `links` in its metadata."""
    if not isinstance(target, str) or not 0 < len(target) <= MAX_ID_LENGTH:
        raise HandoffsError(f"A session id is 1 to {MAX_ID_LENGTH} characters, not "
                            f"{target!r}.", code="invalid_argument")
    source = str(data["id"])
    header = mark.header_dict()
    if header is None:  # before the first turn: nothing was stored
        now = time.time()
        header = {"id": source, "created_at": now, "updated_at": now}
    records = data.get("handoffs", ())[:mark.records]
    ids = {str(r["id"]): new_record_id() for r in records if r.get("id")}
    events = await _events_before(store, data, mark.events)
    seqs = [int(e.pop("seq")) for e in events]
    renamed = _renamer(ids)
    out = renamed(header)
    out["id"] = target
    if target != source:  # its keys name events by the original's numbers
        drop = (*drop, FIELD, FORK_KEY)
    out["metadata"] = _kept(out.get("metadata", {}), drop) | links
    out["messages"] = data.get("messages", ())[:mark.messages]
    out["handoffs"] = renamed(records)
    out["events"] = renamed(events)
    for e in out["events"]:
        e["session_id"] = target
    copy = await store.import_session(out, replace=replace)
    # The copy's earlier marks get what its header got: without the dropped keys (a
    # customer's token hash) and with the copy's own (its token), so rewinding the copy
    # to one of them never brings back the original's credential.
    own = {k: v for k, v in links.items() if k not in LINKS}
    fork_marks = [TurnMark(m.turn, m.messages, m.records, bisect_left(seqs, m.events),
                           None if m.header is None
                           else _rename_header(m.header, renamed, target, drop, own))
                  for m in marks if m.turn < mark.turn]
    if fork_marks:
        await marked(store).put_turn_marks(target, fork_marks)
    return copy


async def link(store: SessionStore, session_id: str, key: str, entry: dict[str, Any]
               ) -> None:
    """Append `entry` to the list `metadata[key]` of the session, under its lock."""
    def append(state: SessionState) -> bool:
        state.metadata[key] = [*state.metadata.get(key, ()), entry]
        return True

    await edit_session(store, session_id, append)  # None: deleted, the fork stands alone


async def _events_before(store: SessionStore, data: dict[str, Any], n: int
                         ) -> list[dict[str, Any]]:
    """The session's stored events numbered below `n`, each with its `seq` (read from its
    event log: the memory store's exports carry none, but it keeps its newest events)."""
    if not isinstance(store, EventLog):
        return []
    out: list[dict[str, Any]] = []
    last = -1
    while True:
        page = await store.events_after(str(data["id"]), last, PAGE)
        out.extend(e for e in page if e["seq"] < n)
        if len(page) < PAGE or page[-1]["seq"] >= n:
            return out
        last = page[-1]["seq"]


def _renamer(ids: dict[str, str]) -> Callable[[Any], Any]:
    """A function of JSON data replacing every string that is an old record id."""
    if not ids:
        return lambda value: value
    if all(_PLAIN.fullmatch(i) for i in ids):  # through its JSON text: C speed
        token = re.compile("|".join(rf'"([\w.:-]{{{n}}})"'
                                    for n in sorted({len(i) for i in ids})))

        def swap(m: re.Match[str]) -> str:
            found = m.group(m.lastindex or 0)
            return f'"{ids.get(found, found)}"'

        return lambda value: json.loads(token.sub(swap, dumps(value)))
    return lambda value: _walk(value, ids)


_PLAIN = re.compile(r"[\w.:-]{1,128}")
"""What a record id is made of, for the fast path (a JSON string of the ids' lengths)."""


def _walk(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, dict):
        return {k: _walk(v, ids) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(v, ids) for v in value]
    return value


def _kept(metadata: Mapping[str, Any], drop: Collection[str]) -> dict[str, Any]:
    """A copy's metadata from its source's: without the links and the `drop` keys."""
    return {k: v for k, v in metadata.items() if k not in LINKS and k not in drop}


def _rename_header(header: str, renamed: Callable[[Any], Any], target: str,
                   drop: Collection[str], own: Mapping[str, Any]) -> str:
    d = renamed(TurnMark(0, 0, 0, 0, header).header_dict())
    d["id"] = target
    d["metadata"] = _kept(d.get("metadata", {}), drop) | dict(own)
    return dumps(d)


# -- checks --------------------------------------------------------------------------------

def _find(marks: list[TurnMark], session_id: str, turn: int) -> TurnMark:
    for m in marks:
        if m.turn == turn:
            return m
    raise HandoffsError(
        f"Session {session_id!r} has no record of where turn {turn} began (it was stored "
        "by a handoffs older than time travel, or imported); fork or rewind to a later "
        "turn.", code="turn_not_recorded")


def _check_still(state: SessionState, held: bool = False) -> None:
    """Refuse to go back in a session a turn is running on, or one that waits for a
    person: its pending call or human would be left behind, or copied and run twice.
    `held`: the caller holds the session's lock, so `running` means its turn died."""
    if state.status == "running" and not held:
        raise _busy(state.id)
    if state.status == "waiting_for_approval" or state.pending is not None:
        raise HandoffsError(
            f"Session {state.id!r} waits for a person to approve or reject a tool call; "
            "approve or reject it first (or fork before the turn that asked).",
            code="waiting_for_approval")
    if state.status == "waiting_for_human":
        raise HandoffsError(
            f"Session {state.id!r} waits for a human agent; let them answer or hand back "
            "first (or fork before the turn that went to them).", code="waiting_for_human")


def _busy(session_id: str) -> HandoffsError:
    return HandoffsError(f"A turn is running on session {session_id!r}; wait for it to end "
                         "(or cancel it), then go back.", code="turn_running")


def _unknown(session_id: str) -> HandoffsError:
    return HandoffsError(f"There is no session {session_id!r}.", code="unknown_session")


def _missing(session_id: str) -> NoReturn:
    raise _unknown(session_id)


def fork_id(session_id: str) -> str:
    """A new fork's default id: `<id>-fork-<random>`."""
    return f"{session_id[:MAX_ID_LENGTH - 14]}-fork-{uuid.uuid4().hex[:8]}"


def _archive_id(session_id: str, n: int) -> str:
    return f"{session_id[:MAX_ID_LENGTH - 20]}-rewound-{n}-{uuid.uuid4().hex[:4]}"
