"""`handoffs sessions`: list, show, export, import and delete stored conversations; fork
one before a turn, rewind it to before a turn (and undo that)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from ..core.session import SessionState
from ..errors import HandoffsError
from ..stores.base import SessionStore
from ..stores.opening import open_store
from .render import Painter, timeline_lines, transcript_lines
from .runners import describe_store


async def sessions_command(action: str, store_url: str, args: Any, painter: Painter) -> int:
    """Do one `sessions` action against the store at `store_url`; the exit code."""
    store = open_store(store_url)
    try:
        if action == "list":
            return await _list(store, args.limit, args.json, painter, store_url)
        if action == "show":
            return await _show(store, args.id, args.json, painter)
        if action == "export":
            return await _export(store, args.id, args.output)
        if action == "import":
            return await _import(store, args.file, args.replace)
        if action in ("fork", "rewind", "undo-rewind"):
            return await _travel(store, action, args)
        if action == "delete":
            if not await store.delete(args.id):
                raise HandoffsError(f"There is no session {args.id!r} in "
                                    f"{describe_store(store_url)}.",
                                    code="unknown_session")
            print(f"deleted session {args.id}")
            return 0
        raise HandoffsError(f"Unknown sessions action {action!r}.", code="invalid_argument")
    finally:
        await store.close()


async def _list(store: SessionStore, limit: int, as_json: bool, p: Painter, url: str) -> int:
    rows = await store.list_sessions(limit=limit)
    if as_json:
        for row in rows:
            print(json.dumps(row.to_dict()))
        return 0
    if not rows:
        print(f"no sessions in {describe_store(url)}")
        return 0
    print(p.sgr(f"{'session':<24} {'active agent':<16} {'turns':>5} {'messages':>8}  "
                f"{'status':<18} updated", "1"))
    for r in rows:
        updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.updated_at))
        print(f"{r.id:<24} {r.active_agent or '-':<16} {r.turn:>5} {r.messages:>8}  "
              f"{r.status:<18} {updated}")
    return 0


async def _load(store: SessionStore, session_id: str) -> SessionState:
    state = await store.load(session_id)
    if state is None:
        raise HandoffsError(f"There is no session {session_id!r} in this store; "
                            "`handoffs sessions list` shows the ones there are.",
                            code="unknown_session")
    return state


async def _show(store: SessionStore, session_id: str, as_json: bool, p: Painter) -> int:
    state = await _load(store, session_id)
    if as_json:
        print(state.to_json())
        return 0
    accepted = sum(1 for r in state.handoffs if r.accepted)
    counts = ", ".join(_count(n, what) for n, what in (
        (state.turn, "turn"), (len(state.messages), "message"), (accepted, "handoff")))
    print(p.sgr(f"session {state.id}", "1") + p.dim(
        f"  {counts}, status {state.status}, active agent ") + p.agent(state.active_agent or "-"))
    print()
    for line in transcript_lines(p, state.messages):
        print(line)
    if state.handoffs:
        print()
        print(p.sgr("handoffs", "1"))
        for line in timeline_lines(p, state.handoffs):
            print("  " + line)
    if state.shared:
        print()
        print(p.sgr("shared memory", "1") + " " + json.dumps(state.shared, ensure_ascii=False))
    if state.context is not None:  # the team's typed context (Team(context_type=...))
        print(p.sgr("context", "1") + " " + json.dumps(state.context, ensure_ascii=False))
    return 0


async def _export(store: SessionStore, session_id: str, output: str | None) -> int:
    data = await store.export_session(session_id)
    if data is None:
        await _load(store, session_id)  # raises the unknown_session error
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    if output in (None, "-"):
        print(text)
    else:
        Path(output).write_text(text + "\n", encoding="utf-8")
        print(f"exported session {session_id} to {output}", file=sys.stderr)
    return 0


async def _import(store: SessionStore, file: str, replace: bool) -> int:
    text = sys.stdin.read() if file == "-" else _read(file)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise HandoffsError(f"{file} is not JSON ({exc}); import takes what "
                            "`handoffs sessions export` writes.", code="invalid_session") from exc
    try:
        state = await store.import_session(data, replace=replace)
    except HandoffsError as exc:
        if exc.code != "session_exists":
            raise
        taken = data.get("id") if isinstance(data, dict) else None
        raise HandoffsError(f"Session {taken!r} already exists in this store; add --replace "
                            "to overwrite it.", code="session_exists") from exc
    print(f"imported session {state.id} ({len(state.messages)} messages)")
    return 0


async def _travel(store: SessionStore, action: str, args: Any) -> int:
    from ..runtime import timetravel

    if action == "fork":
        state = await timetravel.fork(store, args.id, args.turn, args.new_id)
        said = (f"forked session {args.id} before turn {args.turn} as {state.id} "
                f"({_count(len(state.messages), 'message')}, active agent "
                f"{state.active_agent or '-'})")
    elif action == "rewind":
        state = await timetravel.rewind(store, args.id, args.turn)
        last = state.metadata["rewinds"][-1]
        said = (f"rewound session {args.id} to before turn {args.turn} (cut "
                f"{_count(last['messages'], 'message')}, kept as {last['kept_as']}; "
                f"undo: handoffs sessions undo-rewind {args.id})")
    else:
        state = await timetravel.undo_rewind(store, args.id)
        said = (f"put back what the last rewind of session {args.id} cut "
                f"({_count(state.turn, 'turn')}, {_count(len(state.messages), 'message')})")
    if args.json:
        print(state.to_json())
    else:
        print(said)
    return 0


def _read(file: str) -> str:
    try:
        return Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise HandoffsError(f"Cannot read {file}: {exc.strerror}.",
                            code="invalid_argument") from exc


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' * (n != 1)}"
