"""KeyedLocks: holders of one key in arrival order; a lock is made only when someone waits."""

from __future__ import annotations

import asyncio

from handoffs.stores.locks import KeyedLocks


async def test_holders_of_one_key_take_turns_in_arrival_order_and_leave_nothing() -> None:
    locks = KeyedLocks()
    order: list[str] = []
    inside = 0

    async def turn(name: str, pause: float) -> None:
        nonlocal inside
        async with locks.hold("s"):
            inside += 1
            assert inside == 1  # never two at once
            order.append(name)
            await asyncio.sleep(pause)
            inside -= 1

    first = asyncio.create_task(turn("a", 0.02))
    await asyncio.sleep(0)  # `a` holds the key, with no lock made yet
    others = [asyncio.create_task(turn(n, 0.001)) for n in "bcd"]
    await asyncio.gather(first, *others)
    assert order == ["a", "b", "c", "d"]
    assert len(locks) == 0  # nobody holds or waits: nothing kept


async def test_a_waiter_cancelled_in_the_queue_neither_holds_nor_blocks_the_next() -> None:
    locks = KeyedLocks()
    order: list[str] = []
    release = asyncio.Event()

    async def holder() -> None:
        async with locks.hold("s"):
            order.append("a")
            await release.wait()

    async def waiter(name: str) -> None:
        async with locks.hold("s"):
            order.append(name)

    a = asyncio.create_task(holder())
    await asyncio.sleep(0)
    b = asyncio.create_task(waiter("b"))
    c = asyncio.create_task(waiter("c"))
    await asyncio.sleep(0.01)
    b.cancel()
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(a, c)
    assert b.cancelled() and order == ["a", "c"]
    assert len(locks) == 0
    async with locks.hold("s"):  # free again, at once
        order.append("d")
    assert order == ["a", "c", "d"]


async def test_different_keys_never_wait_for_each_other() -> None:
    locks = KeyedLocks()
    async with locks.hold("s1"):
        await asyncio.wait_for(_enter(locks, "s2"), 1)


async def _enter(locks: KeyedLocks, key: str) -> None:
    async with locks.hold(key):
        pass
