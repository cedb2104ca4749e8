"""What a store offers beyond `SessionStore` is read once, when the runner's store is
set (`Runner.store_features`): a store of one's own without an event log still runs
turns, and what needs the log says so."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from handoffs import Agent, HandoffsError, MemoryStore, Runner, Team
from handoffs.stores.features import EventLog, StoreFeatures
from handoffs.testing import ScriptedModel, reply


class Minimal:
    """A store of one's own: the `SessionStore` methods and nothing else."""

    def __init__(self) -> None:
        self.inner = MemoryStore()

    def lock(self, session_id: str) -> AbstractAsyncContextManager[None]:
        return self.inner.lock(session_id)

    async def load(self, session_id: str) -> Any:
        return await self.inner.load(session_id)

    async def commit(self, state: Any, since: Any, events: Any = ()) -> None:
        await self.inner.commit(state, since, events)

    async def delete(self, session_id: str) -> bool:
        return await self.inner.delete(session_id)

    async def list_sessions(self, limit: int = 50, offset: int = 0, *,
                            status: str | None = None) -> Any:
        return await self.inner.list_sessions(limit, offset, status=status)

    async def export_session(self, session_id: str) -> Any:
        return await self.inner.export_session(session_id)

    async def import_session(self, data: Any, *, replace: bool = False) -> Any:
        return await self.inner.import_session(data, replace=replace)

    async def handoff_stats(self, since: Any = None, until: Any = None) -> Any:
        return await self.inner.handoff_stats(since, until)

    async def close(self) -> None:
        await self.inner.close()


def _runner(store: Any) -> Runner:
    return Runner(Team([Agent("bot")]), model=ScriptedModel([reply("Hi."), reply("Hi.")]),
                  store=store)


def test_every_built_in_store_offers_every_feature() -> None:
    store = MemoryStore()
    features = StoreFeatures.of(store)
    assert features.events is store and features.marks is store
    assert isinstance(store, EventLog)


async def test_a_store_without_an_event_log_runs_turns_and_refuses_what_needs_it() -> None:
    runner = _runner(Minimal())
    assert runner.store_features == StoreFeatures()

    result = await runner.run("s1", "hello", idempotency_key="k-1")
    assert result.output == "Hi."
    with pytest.raises(HandoffsError) as refused:
        await runner.run("s1", "hello", idempotency_key="k-1")  # a retry: its first outcome
    assert refused.value.code == "idempotency_unsupported"
    assert "keeps no events" in str(refused.value)


async def test_replacing_the_store_reads_its_features_again() -> None:
    runner = _runner(Minimal())
    memory = MemoryStore()

    runner.store = memory

    assert runner.store_features.events is memory
    await runner.run("s1", "hello", idempotency_key="k-1")
    again = await runner.run("s1", "hello", idempotency_key="k-1")
    assert again.output == "Hi."
