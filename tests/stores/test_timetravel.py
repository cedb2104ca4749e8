"""Fork and rewind a session at a turn (issue 31), on memory, SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from handoffs import Agent, HandoffsError, HumanAgent, RunContext, Runner, Team, tool
from handoffs.stores.features import EventLog
from handoffs.testing import ScriptedModel, call, reply, transfer

from .conftest import Backend, support_team


@tool
def remember(ctx: RunContext, order: str) -> str:
    """Remember the order."""
    ctx.shared["order"] = order
    return "ok"


def _team() -> Any:
    return support_team(tools=[remember])


def _script() -> ScriptedModel:
    """Turn 1: triage remembers A-1 and answers; turn 2: triage hands to billing, which
    answers; turn 3: billing answers."""
    return ScriptedModel([call("remember", order="A-1"), reply("Noted A-1."),
                          transfer("billing", reason="refund"), reply("Billing here."),
                          reply("Refund sent.")])


async def _three_turns(runner: Runner, sid: str = "s1") -> dict[str, dict[str, Any]]:
    """Run three turns, keeping the export the session had before each."""
    before: dict[str, dict[str, Any]] = {}
    for n, text in enumerate(["order A-1", "refund it please", "thanks"], start=1):
        if n > 1:
            found = await runner.store.export_session(sid)
            assert found is not None
            before[str(n)] = json.loads(json.dumps(found))
        await runner.run(sid, text)
    return before


def _as_original(fork: dict[str, Any], original_id: str, ids: dict[str, str]) -> str:
    """The fork's export read back as the original's: its id, its record ids, no links."""
    back = {new: old for old, new in ids.items()}
    text = json.dumps(fork, sort_keys=True, ensure_ascii=False)
    for new, old in back.items():
        text = text.replace(new, old)
    d = json.loads(text.replace(json.dumps(fork["id"]), json.dumps(original_id)))
    d["metadata"].pop("forked_from")
    return json.dumps(d, sort_keys=True, ensure_ascii=False)


async def test_fork_holds_exactly_what_the_original_loaded_before_the_turn(
        backend: Backend) -> None:
    runner = Runner(_team(), model=_script(), store=backend.open())
    before = await _three_turns(runner)

    fork = await runner.fork("s1", turn=3, new_id="s1-f")

    assert fork.id == "s1-f"
    assert fork.active_agent == "billing"
    assert fork.shared["order"] == "A-1"
    assert fork.shared["handoff_context"]["record_id"] == fork.handoffs[-1].id
    assert fork.turn == 2
    original = await runner.store.export_session("s1")
    copied = await runner.store.export_session("s1-f")
    assert original is not None and copied is not None
    ids = {o["id"]: n["id"] for o, n in zip(before["3"]["handoffs"], copied["handoffs"],
                                            strict=True)}
    assert ids and all(old != new for old, new in ids.items())  # new record ids
    assert _as_original(copied, "s1", ids) == json.dumps(before["3"], sort_keys=True,
                                                         ensure_ascii=False)
    assert copied["metadata"]["forked_from"]["session"] == "s1"
    assert copied["metadata"]["forked_from"]["turn"] == 3
    assert [f["session"] for f in original["metadata"]["forks"]] == ["s1-f"]
    assert len(original["messages"]) > len(copied["messages"])  # the original is whole
    assert all(e["session_id"] == "s1-f" for e in copied["events"])


async def test_fork_before_the_first_turn_is_an_empty_session(backend: Backend) -> None:
    runner = Runner(_team(), model=_script(), store=backend.open())
    await _three_turns(runner)

    fork = await runner.fork("s1", turn=1)

    assert fork.messages == [] and fork.handoffs == [] and fork.shared == {}
    assert fork.turn == 0
    assert fork.id.startswith("s1-fork-")


async def test_a_fork_goes_its_own_way_and_can_be_forked_again(backend: Backend) -> None:
    runner = Runner(_team(), model=_script(), store=backend.open())
    await _three_turns(runner)
    await runner.fork("s1", turn=2, new_id="s1-f")

    other = Runner(_team(), model=ScriptedModel([reply("Triage again.")]),
                   store=backend.open())
    result = await other.run("s1-f", "what about my order?")

    assert result.agent == "triage" and result.output == "Triage again."
    state = await other.get_session("s1-f")
    original = await other.get_session("s1")
    assert state is not None and original is not None
    assert state.turn == 2 and original.turn == 3
    assert [m.text for m in state.messages if m.kind == "user"] == [
        "order A-1", "what about my order?"]
    again = await other.fork("s1-f", turn=2, new_id="s1-f-f")
    assert [m.text for m in again.messages if m.kind == "user"] == ["order A-1"]
    assert again.shared["order"] == "A-1"


async def test_concurrent_forks_of_one_session_are_independent(backend: Backend) -> None:
    runner = Runner(_team(), model=_script(), store=backend.open())
    await _three_turns(runner)

    forks = await asyncio.gather(*(runner.fork("s1", turn=t) for t in (2, 3, 3, 4)))

    assert len({f.id for f in forks}) == 4
    original = await runner.get_session("s1")
    assert original is not None
    assert sorted(f["session"] for f in original.metadata["forks"]) == sorted(
        f.id for f in forks)
    assert [f.turn for f in forks] == [1, 2, 2, 3]
    record_ids = [r.id for f in forks for r in f.handoffs]
    assert len(record_ids) == len(set(record_ids))


async def test_rewind_cuts_the_session_back_and_keeps_what_it_cut(backend: Backend) -> None:
    runner = Runner(_team(), model=_script(), store=backend.open())
    before = await _three_turns(runner)
    count = await runner.store.event_count("s1")  # type: ignore[attr-defined]

    state = await runner.rewind("s1", turn=2)

    assert state.turn == 1 and state.active_agent == "triage" and state.handoffs == []
    assert [m.to_dict() for m in state.messages] == before["2"]["messages"]
    assert state.shared["order"] == "A-1"
    kept = state.metadata["rewinds"][-1]["kept_as"]
    copy = await runner.get_session(kept)
    assert copy is not None and copy.turn == 3 and len(copy.messages) > len(state.messages)
    # the next message starts turn 2 again, and no event number is given twice
    again = Runner(_team(), model=ScriptedModel([reply("Triage, again.")]),
                   store=backend.open())
    result = await again.run("s1", "refund it please")
    assert result.agent == "triage"
    if backend.durable:
        events = await again.store.events_after("s1")  # type: ignore[attr-defined]
        assert all(e["seq"] >= count for e in events if e["turn"] == 2)
    undone = await again.undo_rewind("s1")
    assert undone.turn == 3 and undone.active_agent == "billing"
    assert await again.get_session(kept) is None


async def test_rewind_is_refused_while_a_person_is_awaited(backend: Backend) -> None:
    @tool(needs_approval=True)
    def refund(order: str) -> str:
        """Refund an order."""
        return "refunded"

    team = support_team(tools=[refund])
    runner = Runner(team, model=ScriptedModel([reply("Hello."), call("refund", order="A")]),
                    store=backend.open())
    await runner.run("s1", "hi")
    await runner.run("s1", "refund A")

    with pytest.raises(HandoffsError) as refused:
        await runner.rewind("s1", turn=1)
    assert refused.value.code == "waiting_for_approval"
    with pytest.raises(HandoffsError) as at_end:
        await runner.fork("s1", turn=3)
    assert at_end.value.code == "waiting_for_approval"
    fork = await runner.fork("s1", turn=2)  # before the turn that asked: allowed
    assert fork.status == "idle" and fork.pending is None


async def test_rewind_is_refused_while_a_turn_runs(backend: Backend) -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    @tool
    async def slow() -> str:
        """Take a while."""
        started.set()
        await release.wait()
        return "done"

    runner = Runner(support_team(tools=[slow]),
                    model=ScriptedModel([reply("Hi."), call("slow"), reply("Done.")]),
                    store=backend.open())
    await runner.run("s1", "hi")
    turn = asyncio.create_task(runner.run("s1", "go slow"))
    await started.wait()

    with pytest.raises(HandoffsError) as refused:
        await runner.rewind("s1", turn=1)
    release.set()
    await turn
    assert refused.value.code == "turn_running"


async def test_going_back_to_a_turn_that_is_not_there_is_refused(backend: Backend) -> None:
    runner = Runner(_team(), model=_script(), store=backend.open())
    await _three_turns(runner)
    for bad in (0, 5, "2"):
        with pytest.raises(HandoffsError) as refused:
            await runner.fork("s1", turn=bad)  # type: ignore[arg-type]
        assert refused.value.code == "invalid_turn"
    with pytest.raises(HandoffsError) as unknown:
        await runner.rewind("nope", turn=1)
    assert unknown.value.code == "unknown_session"
    with pytest.raises(HandoffsError) as taken:
        await runner.fork("s1", turn=2, new_id="s1")
    assert taken.value.code == "session_exists"


async def test_a_session_waiting_for_a_human_is_forked_before_but_not_rewound(
        backend: Backend) -> None:
    team = Team([Agent("bot", handoffs=["operator"]), HumanAgent("operator", handoffs=["bot"])])
    runner = Runner(team, model=ScriptedModel([reply("Hello."), transfer("operator")]),
                    store=backend.open())
    await runner.run("s1", "hi")
    await runner.run("s1", "a person please")

    with pytest.raises(HandoffsError) as refused:
        await runner.rewind("s1", turn=2)
    assert refused.value.code == "waiting_for_human"
    fork = await runner.fork("s1", turn=2)
    assert fork.active_agent == "bot" and fork.status == "idle"


async def test_a_turn_that_died_is_cut_by_a_rewind_and_never_answered(
        backend: Backend) -> None:
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        """Never return."""
        started.set()
        await asyncio.Event().wait()
        return ""

    runner = Runner(support_team(tools=[hang]),
                    model=ScriptedModel([reply("Hi."), call("hang"), reply("Again.")]),
                    store=backend.open())
    await runner.run("s1", "hi")
    dying = asyncio.create_task(runner.run("s1", "this turn dies"))
    await started.wait()
    dying.cancel()  # a cancel from outside: the turn died, its message is kept
    with pytest.raises(asyncio.CancelledError):
        await dying
    assert (await runner.get_session("s1")).status == "interrupted"  # type: ignore[union-attr]

    whole = await runner.fork("s1", turn=3)  # the end: the dead turn's message comes along
    assert whole.status == "interrupted"
    state = await runner.rewind("s1", turn=2)
    assert state.status == "idle" and state.turn == 1
    result = await runner.run("s1", "a new question")
    assert result.turn == 2 and result.output == "Again."
    users = [m.text for m in result_messages(await runner.get_session("s1"))]
    assert users == ["hi", "a new question"]


def result_messages(state: Any) -> list[Any]:
    return [m for m in state.messages if m.kind == "user"]


async def test_a_fork_with_another_answer_ends_its_turn_with_it_linked_both_ways(
        backend: Backend) -> None:
    store = backend.open()
    model = ScriptedModel([reply("Hello."), transfer("billing"), reply("Billing here.")])
    runner = Runner(support_team(), model=model, store=store, inspect=True)
    await runner.run("s1", "hi")
    await runner.run("s1", "refund please")

    # Call 2 of turn 2 is billing's, after triage's transfer: answered otherwise.
    fork = await runner.fork_with_answer("s1", 2, 2, "Other answer.", idempotency_key="k")
    assert (fork.turn, str(fork.status), fork.active_agent) == (2, "idle", "billing")
    assert fork.messages[-1].text == "Other answer." and fork.messages[-1].agent == "billing"
    stored = await backend.open().load(fork.id)
    assert stored is not None and stored.version == fork.version
    assert [m.text for m in stored.messages] == [m.text for m in fork.messages]
    assert isinstance(store, EventLog)
    ends = [e["type"] for e in await store.events_after(fork.id)][-2:]
    assert ends == ["message", "run_completed"]
    assert fork.metadata["forked_from"]["call"] == 2

    again = await runner.fork_with_answer("s1", 2, 2, "Other answer.", idempotency_key="k")
    assert again.id == fork.id and again.version == fork.version
    original = await backend.open().load("s1")
    assert original is not None
    assert [f["session"] for f in original.metadata["forks"]] == [fork.id]
