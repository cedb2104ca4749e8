"""`on_handoff` hooks: `(ctx, payload)` and `(ctx)` both work, on transfers and on
delegations; a hook no handoff could call is refused when the route is declared."""

from __future__ import annotations

import pytest

from handoffs import Agent, Handoff, HandoffsError, Runner, RunStatus, Team
from handoffs.testing import ScriptedModel, reply, transfer


def _team(route: Handoff) -> Team:
    return Team([Agent("triage", handoffs=[route]), Agent("billing")])


async def test_a_one_argument_hook_runs_on_a_transfer() -> None:
    seen: list[str] = []

    def hook(ctx: object) -> None:
        seen.append(type(ctx).__name__)

    model = ScriptedModel([transfer("billing"), reply("Billing here.")])
    result = await Runner(_team(Handoff("billing", on_handoff=hook)), model=model).run(
        "s", "charged twice")

    assert result.status is RunStatus.COMPLETED and result.agent == "billing"
    assert seen == ["RunContext"]


async def test_an_async_one_argument_hook_runs_on_a_delegation() -> None:
    seen: list[str] = []

    async def hook(ctx: object) -> None:
        seen.append("called")

    route = Handoff("billing", returns=True, on_handoff=hook)
    model = ScriptedModel([transfer("billing", task="refundable?"), reply("It is refundable."),
                           reply("Yes, refundable.")])
    result = await Runner(_team(route), model=model).run("s", "refundable?")

    assert result.status is RunStatus.COMPLETED and result.output == "Yes, refundable."
    assert seen == ["called"]


async def test_a_two_argument_hook_still_gets_the_payload() -> None:
    got: list[object] = []

    def hook(ctx: object, payload: object) -> None:
        got.append(payload)

    model = ScriptedModel([transfer("billing"), reply("Billing here.")])
    await Runner(_team(Handoff("billing", on_handoff=hook)), model=model).run("s", "hi")

    assert got == [None]


@pytest.mark.parametrize("hook", [lambda: None, lambda a, b, c: None, "not callable"])
def test_a_hook_no_handoff_can_call_is_refused_when_declared(hook: object) -> None:
    with pytest.raises(HandoffsError) as info:
        Handoff("billing", on_handoff=hook)  # type: ignore[arg-type]
    assert info.value.code == "invalid_team"
    assert "on_handoff" in str(info.value)
