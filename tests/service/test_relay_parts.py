"""The parts of the cross-process live relay that need no database: how an event is cut
into notifications and joined again, and how a process keeps and hands out the events it
hears of turns running elsewhere (with a real MemoryStore as the log)."""

from __future__ import annotations

import json
import random
from typing import Any

from handoffs.core.events import Event
from handoffs.server.pubsub import Heard, Hub
from handoffs.server.relay import LIVE_MAX_BYTES, PAYLOAD_BYTES, Assembler, pack
from handoffs.stores import MemoryStore
from handoffs.stores.rows import dumps


def event(seq: int, text: str = "hi", kind: str = "text_delta") -> dict[str, Any]:
    return {"type": kind, "session_id": "s1", "turn": 1, "at": 1.5, "agent": "desk",
            "text": text, "seq": seq}


def test_a_large_event_is_cut_between_characters_and_joined_in_any_order() -> None:
    text = "é€😀\u2028 x\x00\"\\" * 9_000  # multi-byte, NUL, quotes, a line separator
    big = event(7, text)
    parts = pack("app", "proc-a", [("s1", big)])
    assert len(parts) > 10
    assert all(len(p.encode("utf-8")) <= PAYLOAD_BYTES for p in parts)
    assert all("\x00" not in p for p in parts)  # PostgreSQL text cannot hold NUL
    heads = [json.loads(p.partition("\n")[0]) for p in parts]
    assert {(h["schema"], h["origin"], h["session_id"], h["seq"], h["type"], h["parts"])
            for h in heads} == {("app", "proc-a", "s1", 7, "text_delta", len(parts))}
    random.Random(1).shuffle(parts)
    listener = Assembler("app", "proc-b")
    got = [listener.feed(p) for p in parts]
    assert got[:-1] == [[]] * (len(parts) - 1)
    (whole,) = got[-1]
    assert whole[:3] == ("s1", 7, "text_delta")
    assert whole[3] == dumps(big) and json.loads(whole[3]) == big


def test_a_small_event_is_one_notification_and_text_is_repaired_as_stored() -> None:
    e = event(0, "bad \ud800 text")
    (only,) = pack("app", "a", [("s1", e)])
    (heard,) = Assembler("app", "b").feed(only)
    assert json.loads(heard[3])["text"] == "bad \ufffd text"


def test_a_burst_travels_packed_in_few_notifications_and_comes_out_whole_in_order() -> None:
    # Two sessions' events, one of them too large to share a payload, one not valid
    # Unicode, non-ASCII text throughout: packed, cut and joined, each exactly as stored.
    items = [("s1" if n % 2 else "s2", event(n, f"é piece {n} " * (40 if n != 7 else 900)))
             for n in range(60)]
    items[3] = ("s1", event(3, "bad \ud800"))
    payloads = pack("app", "a", items)
    assert len(payloads) < 20
    assert all(len(p.encode("utf-8")) <= PAYLOAD_BYTES for p in payloads)
    listener = Assembler("app", "b")
    got = [e for p in payloads for e in listener.feed(p)]
    assert [(sid, seq, kind) for sid, seq, kind, _ in got] == \
        [(sid, e["seq"], "text_delta") for sid, e in items]
    assert [text for *_, text in got] == [dumps(e).replace("\ud800", "\ufffd")
                                          for _, e in items]
    assert Assembler("app", "a").feed(payloads[0]) == []  # its own


def test_a_packed_notification_whose_header_does_not_match_its_texts_yields_nothing(
) -> None:
    (payload,) = pack("app", "a", [("s1", event(0)), ("s1", event(1))])
    assert Assembler("app", "b").feed(payload + "x") == []
    head, _, texts = payload.partition("\n")
    assert Assembler("app", "b").feed(head + "\n" + texts[:-1]) == []
    assert len(Assembler("app", "b").feed(payload)) == 2


def test_too_large_events_are_not_sent_and_others_are_not_ours() -> None:
    assert pack("app", "a", [("s1", event(0, "x" * (LIVE_MAX_BYTES + 1)))]) == []
    (payload,) = pack("app", "a", [("s1", event(0))])
    assert Assembler("app", "a").feed(payload) == []  # its own
    assert Assembler("other", "b").feed(payload) == []  # another schema's
    assert Assembler("app", "b").feed("3 s1") == []  # an older wake-up format
    assert Assembler("app", "b").feed("{not json\nx") == []


async def test_heard_events_reach_subscribers_once_in_order_with_the_stored_copies() -> None:
    store = MemoryStore()
    hub = Hub(store)
    sub = await hub.subscribe("s1", -1)
    # Heard out of order (a gap waits), then the turn's end: the stored copies of the
    # same numbers are dropped.
    for seq in (0, 2, 1):
        hub.heard("s1", seq, "text_delta", dumps(event(seq, f"t{seq}")))
    got = [sub.queue.get_nowait() for _ in range(3)]
    assert [e["seq"] for e in got] == [0, 1, 2]
    assert sub.queue.empty()
    # A subscriber joining now gets the turn so far from what was heard.
    late = await hub.subscribe("s1", -1)
    assert [late.queue.get_nowait()["seq"] for _ in range(3)] == [0, 1, 2]
    # The commit says 3 events are stored: those heard are forgotten.
    hub.wake("s1", 3)
    assert "s1" not in hub.remote
    hub.heard("s1", 3, "text_delta", dumps(event(3)))
    hub.heard("s1", 4, "run_completed", dumps(event(4, kind="run_completed")))
    assert "s1" not in hub.remote  # the terminal event comes after its commit
    assert [sub.queue.get_nowait()["seq"] for _ in range(2)] == [3, 4]
    await hub.close()


async def test_a_gap_in_what_was_heard_is_filled_from_the_log_at_the_commit() -> None:
    store = MemoryStore()
    state = await store.load("s1")
    assert state is None
    hub = Hub(store)
    sub = await hub.subscribe("s1", -1)
    hub.heard("s1", 1, "text_delta", dumps(event(1)))  # 0 was never heard
    assert sub.queue.empty()
    # The turn is stored (as another process would store it), and its commit is heard.
    from handoffs.core.session import Checkpoint, SessionState

    s = SessionState("s1", active_agent="desk")
    events = [Event("text_delta", "s1", 1, 1.5, {"agent": "desk", "text": "hi"}, seq=n)
              for n in (0, 1)]
    await store.commit(s, Checkpoint(0, 0, 0), events)
    hub.wake("s1", 2)
    first = await sub.queue.get()
    second = await sub.queue.get()
    assert [first["seq"], second["seq"]] == [0, 1]
    assert sub.queue.empty()
    await hub.close()


async def test_what_is_kept_of_turns_running_elsewhere_is_bounded(monkeypatch: Any) -> None:
    from handoffs.server import pubsub

    monkeypatch.setattr(pubsub, "HEARD_LIMIT", 10_000)
    hub = Hub(MemoryStore())
    for seq in range(3):
        hub.heard("old", seq, "text_delta", dumps(event(seq, "x" * 1000)))
    for seq in range(8):  # the newest session alone passes the limit: it goes too
        hub.heard("new", seq, "text_delta", dumps(event(seq, "y" * 2000)))
    assert "old" not in hub.remote
    assert sum(len(t) for kept in hub.remote.values() for *_, t in kept) <= 10_000
    await hub.close()


def test_a_schema_name_that_spells_an_origin_does_not_hide_other_processes() -> None:
    # A process drops its own events by the text `"origin":"<it>"` in the header;
    # inside a JSON string those quotes are escaped, so only a real origin matches.
    schema = 'app"origin":"b"'
    (payload,) = pack(schema, "a", [("s1", event(0))])
    (heard,) = Assembler(schema, "b").feed(payload)
    assert heard[:3] == ("s1", 0, "text_delta")
    assert Assembler(schema, "a").feed(payload) == []


async def test_a_heard_event_is_framed_as_the_text_it_came_as() -> None:
    from handoffs.server.sse import frame

    hub = Hub(MemoryStore())
    sub = await hub.subscribe("s1", -1)
    e = event(0, "é \u2028 line")
    (payload,) = pack("app", "a", [("s1", e)])
    (heard,) = Assembler("app", "b").feed(payload)
    hub.heard(*heard)
    got = sub.queue.get_nowait()
    assert isinstance(got, Heard) and got.whole() == e
    assert (got["seq"], got["type"]) == (0, "text_delta")
    # The frame's data is the stores' text of the event, byte for byte, whether it was
    # heard or emitted here (U+2028 escaped: some clients end a line at it).
    stored = dumps(e).replace("\u2028", "\\u2028")
    assert frame(got) == f"id: 0\nevent: text_delta\ndata: {stored}\n\n"
    assert frame(dict(e)) == frame(got)
    await hub.close()


async def test_a_heard_text_without_its_number_is_framed_with_the_number_it_came_under(
) -> None:
    from handoffs.server.sse import frame

    hub = Hub(MemoryStore())
    sub = await hub.subscribe("s1", -1)
    bare = {k: v for k, v in event(0).items() if k != "seq"}
    hub.heard("s1", 0, "text_delta", dumps(bare))
    got = sub.queue.get_nowait()
    assert got["seq"] == 0
    assert json.loads(frame(got).split("data: ", 1)[1]) == {**bare, "seq": 0}
    await hub.close()


async def test_an_idle_stream_sends_keep_alives_and_then_the_next_event() -> None:
    import asyncio

    from handoffs.server.sse import with_heartbeat

    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    frames = with_heartbeat(queue, 0.01)
    assert await anext(frames) == "retry: 1000\n\n"
    assert await anext(frames) == ": keep-alive\n\n"
    queue.put_nowait(event(5))
    assert (await anext(frames)).startswith("id: 5\nevent: text_delta\n")
    queue.put_nowait(None)
    assert [f async for f in frames] == []


async def test_events_already_waiting_go_out_as_one_chunk() -> None:
    import asyncio

    from handoffs.server.sse import frame, with_heartbeat

    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    frames = with_heartbeat(queue, 10,
                            lambda e: None if e["type"] == "inspect_hidden" else e)
    assert await anext(frames) == "retry: 1000\n\n"
    for n in range(3):
        queue.put_nowait(event(n, kind="inspect_hidden" if n == 1 else "text_delta"))
    chunk = await anext(frames)
    assert [line for line in chunk.split("\n") if line.startswith("id:")] == \
        ["id: 0", "id: 2"]
    assert chunk.endswith("\n\n") and chunk.count("\n\n") == 2
    from handoffs.server.sse import CHUNK

    for n in range(3, 3 + CHUNK + 5):  # a long catch-up goes out in bounded pieces
        queue.put_nowait(event(n))
    assert (await anext(frames)).count("\n\n") == CHUNK
    assert (await anext(frames)).count("\n\n") == 5
    queue.put_nowait(event(200))
    queue.put_nowait(None)  # the last events before the end are still sent
    assert [f async for f in frames] == [frame(event(200))]


class CountingStore(MemoryStore):
    """A memory store that counts the reads of its event log."""

    reads = 0

    async def events_after(self, *args: Any, **kwargs: Any) -> Any:
        self.reads += 1
        return await super().events_after(*args, **kwargs)


async def stored_turn(store: MemoryStore, n: int) -> None:
    """A turn of `n` events (the last `run_completed`) stored as another process would."""
    from handoffs.core.session import Checkpoint, SessionState

    events = [Event("text_delta", "s1", 1, 1.5, {"agent": "desk", "text": "hi"}, seq=i)
              for i in range(n - 1)]
    events.append(Event("run_completed", "s1", 1, 1.5, {"agent": "desk"}, seq=n - 1))
    await store.commit(SessionState("s1", active_agent="desk"), Checkpoint(0, 0, 0), events)


async def test_a_commit_heard_before_the_turns_last_event_reads_nothing_when_it_comes(
) -> None:
    import asyncio

    from handoffs.server.pubsub import RELAY_GRACE

    store = CountingStore()
    hub = Hub(store)
    sub = await hub.subscribe("s1", -1)
    reads = store.reads
    for seq in (0, 1):
        hub.heard("s1", seq, "text_delta", dumps(event(seq)))
    await stored_turn(store, 3)
    hub.wake("s1", 3)  # the commit, heard before the turn's last event
    hub.heard("s1", 2, "run_completed", dumps(event(2, kind="run_completed")))
    await asyncio.sleep(RELAY_GRACE * 3)
    assert [sub.queue.get_nowait()["seq"] for _ in range(3)] == [0, 1, 2]
    assert sub.queue.empty()
    assert store.reads == reads  # every event came live: the log was not read
    await hub.close()


async def test_a_live_event_lost_after_the_commit_comes_from_the_log() -> None:
    store = CountingStore()
    hub = Hub(store)
    sub = await hub.subscribe("s1", -1)
    for seq in (0, 1):
        hub.heard("s1", seq, "text_delta", dumps(event(seq)))
    await stored_turn(store, 3)
    hub.wake("s1", 3)  # the turn's last event never comes live
    got = [sub.queue.get_nowait()["seq"] for _ in range(2)]
    last = await sub.queue.get()
    assert [*got, last["seq"]] == [0, 1, 2] and last["type"] == "run_completed"
    await hub.close()
