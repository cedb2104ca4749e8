"""Turn-wide limits: the turn's time limit around each activation of the main line, the
fallback's grace after it, and the output `Runner(on_max_steps=...)` makes instead of a
failure. None of this runs unless the runner or the call sets a limit or a handler.

The deadline is checked by bounding each activation of the main line (its model calls,
tools and delegations) with the time left, so a turn never overruns its limit by a whole
activation. A turn past its limit fails its agent with `timeout`; the team's fallback
then takes over as for any failure and gets what is left, but at least `Turn.grace`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

from ...core.messages import AssistantMessage
from ..state import Fail, Leg, Outcome, Turn, append, failed, result
from ..state.result import RunResult, RunStatus
from .context import ctx_of


async def within_deadline(t: Turn, leg: Leg,
                          steps: Callable[[Turn, Leg], Awaitable[Outcome]]) -> Outcome:
    """`steps(t, leg)` bounded by the turn's time left (and the agent's own timeout)."""
    assert t.deadline is not None
    name = leg.agent.name
    left = t.deadline - asyncio.get_running_loop().time()
    if left <= 0:
        return _late(name)
    own = leg.agent.timeout
    limit = left if own is None or own > left else own
    try:
        return await t.runner.executor.within(steps(t, leg), limit)
    except TimeoutError:
        if limit is own:
            return Fail("timeout", f"{name} did not finish within {own:g} s.", name)
        return _late(name)


def _late(name: str) -> Fail:
    return Fail("timeout", f"The turn reached its time limit before {name} finished "
                "(run(timeout=...) / Runner(turn_timeout=...)).", name)


def grace_for_fallback(t: Turn) -> None:
    """The fallback of a timed turn gets what is left of the limit, at least the grace."""
    if t.deadline is not None:
        t.deadline = max(t.deadline, asyncio.get_running_loop().time() + t.grace)


async def max_steps_output(t: Turn, leg: Leg, fail: Fail) -> RunResult:
    """The turn's result from `Runner(on_max_steps=...)`: COMPLETED with the handler's
    text, or FAILED with `max_steps` and the handler's exception when it raises."""
    handler = t.runner.on_max_steps
    assert handler is not None
    name = leg.agent.name
    try:
        value = handler(ctx_of(t, leg))
        if inspect.isawaitable(value):
            value = await value
        if not isinstance(value, str):
            raise TypeError(f"on_max_steps returned {type(value).__name__}, not the text "
                            "of the turn's output")
    except Exception as exc:
        return failed(t, Fail("max_steps", f"{fail.message} The on_max_steps handler failed "
                              f"({type(exc).__name__}: {exc}).", fail.agent,
                              recoverable=False, exception=exc))
    append(t, leg, AssistantMessage(value, name))
    t.emit("max_steps_reached", {"agent": name, "steps": t.steps, "output": value})
    t.emit("message", {"agent": name, "text": value})
    return result(t, value, name, RunStatus.COMPLETED)
