"""Tokens per call, per agent, per model, per turn and per handoff, with the cache and
reasoning counts kept apart everywhere."""

from __future__ import annotations

from handoffs import Agent, Handoff, Runner, Team
from handoffs.core.handoff import HandoffRecord
from handoffs.models import ModelRequest, ModelResponse, Usage
from handoffs.testing import ScriptedModel, reply, transfer


class Counted(ScriptedModel):
    """A scripted model whose every response spent 1,000 tokens in (800 of them read from
    the cache, 100 written), 50 out (20 of them reasoning), and names its model."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await super().complete(request)
        response.usage = Usage(1_000, 50, 1, cache_read_tokens=800, cache_write_tokens=100,
                               reasoning_tokens=20)
        response.model = "counted-1"
        return response


def team() -> Team:
    return Team([Agent("triage", handoffs=["billing", Handoff("policy", returns=True)]),
                 Agent("billing"), Agent("policy")])


async def test_a_handoff_record_carries_what_the_source_spent_up_to_the_handoff() -> None:
    model = Counted({"triage": [reply("Hello."), transfer("policy", task="refundable?"),
                                transfer("billing", reason="a charge")],
                     "billing": [reply("Refunded.")], "policy": [reply("Yes.")]})
    runner = Runner(team(), model=model)
    await runner.run("s", "hi")
    result = await runner.run("s", "refund A-1")

    delegation, transfer_ = result.handoffs
    # The delegation: triage's first call of this turn; the transfer: both its calls.
    # Last turn's "Hello." is not counted: a record says what this turn's work cost.
    assert delegation.usage == Usage(1_000, 50, 1, 800, 100, 20)
    assert transfer_.usage == Usage(2_000, 100, 2, 1_600, 200, 40)
    # Kept with the session, apart, and read back.
    state = await runner.get_session("s")
    assert state is not None
    stored = HandoffRecord.from_dict(state.handoffs[-1].to_dict())
    assert stored.usage == transfer_.usage
    assert state.handoffs[-1].to_dict()["usage"] == {
        "input_tokens": 2_000, "output_tokens": 100, "requests": 2,
        "cache_read_tokens": 1_600, "cache_write_tokens": 200, "reasoning_tokens": 40}
    # The events say it too, and the turn's end says what the whole turn spent, by model.
    handoff_events = [e for e in result.events if e.type == "agent_handoff"]
    assert [e["usage"]["requests"] for e in handoff_events] == [1, 2]
    end = result.events[-1]
    assert end.type == "run_completed"
    assert end["usage"] == result.usage.to_dict()
    assert result.usage == Usage(4_000, 200, 4, 3_200, 400, 80)
    assert end["usage_by_model"] == {"counted-1": result.usage.to_dict()}
    assert result.usage_by_agent["triage"].requests == 2
    assert result.usage_by_agent["billing"].cache_read_tokens == 800


async def test_a_users_pick_has_no_usage() -> None:
    runner = Runner(team(), model=Counted([reply("Hi.")]))
    await runner.run("s", "hi")
    record = await runner.select_agent("s", "billing")
    assert record.usage is None and "usage" not in record.to_dict()
