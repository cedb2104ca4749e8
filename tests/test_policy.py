"""Behaviour 3: every policy rule, with its stable code, fed back to the model."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from handoffs import (
    Agent,
    Handoff,
    HandoffPolicy,
    HandoffTo,
    Runner,
    RunStatus,
    Team,
    tool,
)
from handoffs.testing import ScriptedModel, call, reply, transfer


async def rejected_code(team: Team, *steps: object, channel: str | None = None,
                        runs: int = 1) -> tuple[str | None, ScriptedModel]:
    """Run a scripted turn whose first request is refused; return the rejection code."""
    model = ScriptedModel([*steps, reply("I'll handle it myself.")])  # type: ignore[list-item]
    runner = Runner(team, model=model)
    result = await runner.run("s", "help", channel=channel)
    rejected = [r for r in result.handoffs if not r.accepted]
    assert result.status is RunStatus.COMPLETED
    return (rejected[0].rejection if rejected else None), model


async def test_unknown_target() -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    code, model = await rejected_code(team, transfer("nobody"))
    assert code == "unknown_target"
    # The refusal reached the model as the call's result, with the routes it can take.
    fed_back = [m for m in model.requests[1].messages if m.role == "tool"]
    assert "no agent named 'nobody'" in fed_back[0].text and "billing" in fed_back[0].text


async def test_self_handoff() -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    code, _ = await rejected_code(team, transfer("triage"))
    assert code == "self_handoff"


async def test_not_declared() -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing"), Agent("tech")])
    code, _ = await rejected_code(team, transfer("tech"))
    assert code == "not_declared"


async def test_target_disabled() -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing", enabled=False)])
    code, model = await rejected_code(team, transfer("billing"))
    assert code == "target_disabled"
    assert "transfer_to_billing" not in [t.name for t in model.requests[0].tools]


async def test_system_only_target_needs_the_supervisor() -> None:
    team = Team([Agent("triage", handoffs=["auditor"]), Agent("auditor", system_only=True),
                 Agent("boss", handoffs=["auditor"])], supervisor="boss")
    code, _ = await rejected_code(team, transfer("auditor"))
    assert code == "system_only"


async def test_supervisor_may_reach_a_system_only_agent() -> None:
    team = Team([Agent("boss", handoffs=["auditor"]), Agent("auditor", system_only=True)],
                supervisor="boss")
    model = ScriptedModel([transfer("auditor"), reply("audited")])
    result = await Runner(team, model=model).run("s", "audit please")
    assert result.agent == "auditor"


async def test_missing_capability() -> None:
    team = Team([Agent("triage", handoffs=[Handoff("billing", requires=("refunds",))]),
                 Agent("billing", capabilities=("invoices",))])
    code, _ = await rejected_code(team, transfer("billing"))
    assert code == "missing_capability"


async def test_channel_unsupported() -> None:
    team = Team([Agent("triage", handoffs=["voice"]), Agent("voice", channels=["phone"])])
    code, _ = await rejected_code(team, transfer("voice"), channel="web")
    assert code == "channel_unsupported"


async def test_loop_detected_after_the_target_got_loop_limit_recent_handoffs() -> None:
    a = Agent("a", handoffs=["b"])
    b = Agent("b", handoffs=["a"])
    team = Team([a, b], policy=HandoffPolicy(max_handoffs_per_turn=10))
    # a->b, b->a, a->b would make b's third... b already got 2 among the last 5 -> refused.
    model = ScriptedModel([transfer("b"), transfer("a"), transfer("b"), transfer("a"),
                           transfer("b"), reply("a stays")])
    result = await Runner(team, model=model).run("s", "ping")
    codes = [(r.target, r.accepted, r.rejection) for r in result.handoffs]
    assert codes == [("b", True, None), ("a", True, None), ("b", True, None),
                     ("a", True, None), ("b", False, "loop_detected")]
    assert result.agent == "a"


async def test_too_many_handoffs_in_one_turn() -> None:
    agents = [Agent(f"a{i}", handoffs=[f"a{i + 1}"]) for i in range(4)] + [Agent("a4")]
    team = Team(agents, policy=HandoffPolicy(max_handoffs_per_turn=2))
    model = ScriptedModel([transfer("a1"), transfer("a2"), transfer("a3"), reply("a2 answers")])
    result = await Runner(team, model=model).run("s", "go")
    assert [r.rejection for r in result.handoffs] == [None, None, "too_many_handoffs"]
    assert result.agent == "a2"


class Ticket(BaseModel):
    order_id: str
    amount: float


async def test_invalid_payload_is_refused_with_the_validation_errors() -> None:
    team = Team([Agent("triage", handoffs=[Handoff("refunds", payload=Ticket)]),
                 Agent("refunds")])
    code, model = await rejected_code(
        team, transfer("refunds", reason="refund", payload={"order_id": "A1", "amount": "lots"}))
    assert code == "invalid_payload"
    fed_back = next(m for m in model.requests[1].messages if m.role == "tool").text
    assert "amount" in fed_back


async def test_rules_are_checked_in_the_documented_order() -> None:
    # Disabled AND on the wrong channel AND bad payload: the first rule in order wins.
    team = Team([Agent("triage", handoffs=[Handoff("refunds", payload=Ticket)]),
                 Agent("refunds", enabled=False, channels=["phone"])])
    code, _ = await rejected_code(team, transfer("refunds", payload={}), channel="web")
    assert code == "target_disabled"


async def test_programmatic_handoffs_follow_the_same_rules() -> None:
    @tool
    def escalate() -> HandoffTo:
        """Escalate to a manager."""
        return HandoffTo("tech", reason="needs tech")

    team = Team([Agent("triage", tools=[escalate], handoffs=["billing"]), Agent("billing"),
                 Agent("tech")])
    code, _ = await rejected_code(team, call("escalate"))
    assert code == "not_declared"


async def test_programmatic_handoff_on_a_declared_route_is_accepted() -> None:
    @tool
    def escalate() -> HandoffTo:
        """Escalate to billing."""
        return HandoffTo("billing", reason="needs billing")

    team = Team([Agent("triage", tools=[escalate], handoffs=["billing"]), Agent("billing")])
    model = ScriptedModel([call("escalate"), reply("billing answers")])
    result = await Runner(team, model=model).run("s", "hi")
    assert result.agent == "billing"
    assert result.handoffs[0].reason.value == "programmatic"
    assert result.handoffs[0].explanation == "needs billing"


async def test_a_model_that_keeps_asking_is_stopped_by_max_steps() -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")],
                policy=HandoffPolicy(max_failed_steps=None))
    model = ScriptedModel([transfer("nobody")] * 50)
    result = await Runner(team, model=model, max_steps=4).run("s", "hi")
    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "max_steps"
    assert len(model.requests) == 4
    with pytest.raises(Exception, match="max_steps"):
        result.raise_for_status()


async def test_a_model_that_keeps_asking_stops_long_before_max_steps() -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = ScriptedModel([transfer("nobody")] * 50)
    result = await Runner(team, model=model, max_steps=20).run("s", "hi")
    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "no_progress"
    # three refused steps, then a last word without tools, in which it called again
    assert len(model.requests) == 4 and model.requests[-1].tools == ()


def test_policy_defaults_are_the_documented_ones() -> None:
    p = HandoffPolicy()
    assert (p.max_handoffs_per_turn, p.loop_window, p.loop_limit, p.allow_self) == (5, 5, 2, False)
