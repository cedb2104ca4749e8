"""A streamed client is told a turn completed only once the turn is stored.

A real server is killed (SIGKILL) the moment its client reads `run_completed` of a
90,000-character answer (on SQLite while another process held the file a moment, so the
turn's last commit waits): the answer must be in the store, every time. A turn whose last
commit fails (the disk is full) ends its stream with `run_failed` and the store's code,
never `run_completed`, and the server logs it.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from handoffs.core.messages import AssistantMessage
from service.conftest import bearer
from stores.conftest import Backend

from .disk import small_disk
from .fault_team import BIG
from .servers import hold_writes, serve, sse

RUNS = int(os.environ.get("HANDOFFS_FAULT_RUNS", "6"))


def _stream(url: str, sid: str, token: str, text: str) -> list[dict[str, object]]:
    """POST a message as SSE and read its events to the terminal one."""
    events = []
    with httpx.stream("POST", f"{url}/v1/sessions/{sid}/messages", json={"text": text},
                      headers={**bearer(token), "Accept": "text/event-stream"},
                      timeout=60) as r:
        assert r.status_code == 200
        for event in sse(r):
            events.append(event)
            if event["type"] in ("run_completed", "run_failed", "error"):
                break
    return events


async def test_a_server_killed_as_its_client_reads_run_completed_has_stored_the_answer(
        durable_backend: Backend, tmp_path: Path) -> None:
    assert durable_backend.url is not None
    sqlite = durable_backend.kind == "sqlite"
    stored = 0
    for _ in range(RUNS):
        with serve(durable_backend.url, tmp_path) as server:
            sid, token = server.session()
            holder = None
            with httpx.stream("POST", f"{server.url}/v1/sessions/{sid}/messages",
                              json={"text": "big"}, timeout=60,
                              headers={**bearer(token), "Accept": "text/event-stream"}) as r:
                for line in r.iter_lines():
                    if line == "event: text_delta" and holder is None and sqlite:
                        # Another writer holds the file a moment while the answer streams:
                        # the turn's last commit has to wait for it. (PostgreSQL needs no
                        # help: encoding a large commit takes long enough; and a commit it
                        # was sent still lands after a kill.)
                        holder = hold_writes(durable_backend.url, sid, 0.5)
                    if line in ("event: run_completed", "event: run_failed"):
                        server.kill()  # the moment the client knows, before its data
                        break
            assert line == "event: run_completed", line
            if holder is not None:
                holder.join(10)
        state = await durable_backend.open().load(sid)
        assert state is not None
        answers = [m for m in state.messages if isinstance(m, AssistantMessage)]
        stored += bool(answers and answers[-1].text == "x" * BIG and state.status == "idle")
    print(f"{durable_backend.kind}: {RUNS} kills on run_completed, {stored} answers stored, "
          f"{RUNS - stored} told completed but not stored")
    assert stored == RUNS


async def test_a_turn_whose_last_commit_fails_ends_with_run_failed_and_the_code(
        tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        url = f"sqlite:///{disk.path / 'sessions.db'}"
        with serve(url, tmp_path, preexec=disk.preexec) as server:
            sid, token = server.session()
            assert server.say(sid, token, "hello").status_code == 200
            disk.fill(server.proc.pid)  # room for a message, not for a 90 KB answer

            events = _stream(server.url, sid, token, "big")

            assert events[-1]["type"] == "run_failed", [e["type"] for e in events]
            assert events[-1]["code"] == disk.code
            assert not any(e["type"] == "run_completed" for e in events)
            assert "could not be stored" in server.output()
            disk.free(server.proc.pid)

            # The message is stored and answered once, by the next turn.
            r = server.say(sid, token, "then this")
            assert r.status_code == 200 and r.json()["status"] == "completed", r.text
            exported = server.export(sid)
            users = [m["text"] for m in exported["messages"] if m["kind"] == "user"]
            assert users == ["hello", "big", "then this"]
            answers = [m["text"] for m in exported["messages"] if m["kind"] == "assistant"]
            assert answers == ["answer to hello", "answer to then this"]
