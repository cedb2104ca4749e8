"""What `RuleModel` does when no rule applies: hand off toward the agent a message is
about (along the team's routes, back the way it came if need be), escalate to a person,
fill payloads and tool arguments from the message, call a tool the message names, report
what came back, and stream a word at a time."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from handoffs import Agent, Handoff, HumanAgent, Runner, RunStatus, Team, tool
from handoffs.testing import RuleModel


class Refund(BaseModel):
    order_id: str
    amount: float = Field(gt=0)


@tool(read_only=True)
def track_order(order_id: str) -> str:
    """Where an order is."""
    return f"{order_id} is on its way."


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an amount on an order."""
    return f"Refunded {amount:.2f} on {order_id}."


def shop() -> Team:
    return Team([
        Agent("front", description="Greets customers and routes them.",
              handoffs=["orders", "tech"]),
        Agent("orders", description="Deliveries and returns.", tools=[track_order],
              handoffs=[Handoff("refunds", payload=Refund), "front",
                        Handoff("policy", returns=True)], display_name="Orders desk"),
        Agent("refunds", description="Issues refunds.", tools=[issue_refund],
              handoffs=["front"], display_name="Refunds"),
        Agent("tech", description="Crashes and setup problems.", handoffs=["front", "sam"]),
        Agent("policy", description="Return rules.", handoffs=["legal"]),
        Agent("legal", description="Contracts and lawyers."),
        HumanAgent("sam", description="Looks into accounts.", display_name="Sam"),
    ])


def moves(result: Any) -> list[tuple[str, str]]:
    return [(r.source, r.target) for r in result.handoffs]


async def test_with_the_team_it_hands_on_along_a_path_and_back_the_way_it_came() -> None:
    team = shop()
    runner = Runner(team, model=RuleModel(team=team))

    refund = await runner.run("s", "Please refund 20 on B-77")
    # front has no route to refunds: it goes through orders, which fills the payload.
    assert moves(refund) == [("front", "orders"), ("orders", "refunds")]
    assert refund.handoffs[0].explanation == "The user mentions: refund (for Refunds)."
    assert refund.handoffs[1].payload == {"order_id": "B-77", "amount": 20.0}
    # issue_refund changes something: named, it is not called on a guess, but named.
    assert refund.output == (
        "(Offline placeholder) A real model would call issue_refund here, with arguments "
        "it works out from the conversation; the offline model does not call a tool that "
        "changes something on a guess.")

    crash = await runner.run("s", "the app crashes on setup")
    assert moves(crash) == [("refunds", "front"), ("front", "tech")]
    assert crash.agent == "tech"


async def test_without_the_team_it_sees_only_the_routes_a_request_offers() -> None:
    runner = Runner(shop(), model=RuleModel())
    result = await runner.run("s", "Please refund 20 on B-77")
    assert result.agent == "front" and result.handoffs == []


async def test_asked_for_a_person_it_escalates_to_a_human_agent() -> None:
    team = shop()
    runner = Runner(team, model=RuleModel(team=team))
    await runner.run("s", "setup crashes")
    result = await runner.run("s", "Can someone look at this?")
    assert result.status is RunStatus.WAITING_FOR_HUMAN and result.agent == "sam"
    assert result.handoffs[0].reason.value == "escalation"
    assert result.handoffs[0].explanation == "The user asks for a person."

    # Without the team, a target is a person when its route says so.
    desk = Team([Agent("desk", handoffs=[Handoff("ops", description="A human operator.")]),
                 HumanAgent("ops")])
    result = await Runner(desk, model=RuleModel()).run("s", "I want a person")
    assert result.status is RunStatus.WAITING_FOR_HUMAN


async def test_a_payload_it_cannot_fill_is_asked_for_and_a_bad_one_reported() -> None:
    team = shop()
    runner = Runner(team, model=RuleModel(team=team))
    await runner.run("s", "where is my delivery?")                # orders holds it now
    missing = await runner.run("s", "I need a refund")
    assert missing.agent == "orders" and missing.handoffs == []
    assert missing.output == "To hand this to Refunds I need: order_id, amount."

    refused = await runner.run("s", "refund 0 on B-77")          # amount must be > 0
    assert refused.agent == "orders" and not refused.handoffs[0].accepted
    assert refused.output == "I could not hand this to Refunds; could you tell me more?"


async def test_it_calls_a_tool_the_message_names_with_arguments_from_it() -> None:
    team = shop()
    model = RuleModel(team=team)
    result = await Runner(team, model=model).run("s", "Please track my delivery B-77")
    assert moves(result) == [("front", "orders")]
    calls = [c for r in model.requests for m in r.messages
             for c in getattr(m, "tool_calls", ()) if c.name == "track_order"]
    assert calls[0].arguments == '{"order_id": "B-77"}'
    assert result.output == "Here is what I found: track_order: B-77 is on its way."

    # No identifier, no call: it answers instead, with what a real model could call.
    runner = Runner(team, model=RuleModel(team=team))
    plain = await runner.run("t", "track my deliveries")
    assert plain.agent == "orders" and plain.handoffs[-1].target == "orders"
    state = await runner.get_session("t")
    assert state is not None
    assert not [c for m in state.messages for c in getattr(m, "tool_calls", ())
                if c.name == "track_order"]
    assert plain.output.startswith("(Offline placeholder) A real model would answer “track "
                                   "my deliveries” here, or hand the conversation to ")
    assert ", or call track_order. Mention one of them" in plain.output


async def test_a_delegate_answers_its_caller_and_hands_nothing_on() -> None:
    team = shop()
    runner = Runner(team, model=RuleModel(team=team))
    await runner.run("s", "where is my delivery?")
    result = await runner.run("s", "ask the return policy about lawyers")
    assert [(r.source, r.target, r.returns) for r in result.handoffs] == [
        ("orders", "policy", True)]
    assert result.agent == "orders" and result.output.startswith("policy says: ")
    assert result.output.endswith(
        "A real model would do the task “ask the return policy about lawyers” and answer "
        "Orders desk here, or hand the task to legal (Contracts and lawyers). Mention one of "
        "them, or what it does, to see that happen.")


async def test_it_streams_a_word_at_a_time() -> None:
    runner = Runner(shop(), model=RuleModel(default="Hello there, how can I help?"))
    events = [e async for e in runner.stream("s", "hi")]
    deltas = [e.data["text"] for e in events if e.type == "text_delta"]
    assert deltas == ["Hello ", "there, ", "how ", "can ", "I ", "help?"]


async def test_route_and_tools_can_be_turned_off() -> None:
    team = shop()
    quiet = RuleModel(team=team, route=False, tools=False)
    result = await Runner(team, model=quiet).run("s", "Please track B-77 and refund 20")
    assert result.agent == "front" and result.handoffs == []
    assert result.output == (
        "(Offline placeholder) A real model would answer “Please track B-77 and refund 20” "
        "here, or hand the conversation to Orders desk (Deliveries and returns) or tech "
        "(Crashes and setup problems). Mention one of them, or what it does, to see that "
        "happen.")


async def test_with_the_team_it_never_runs_out_and_is_deterministic() -> None:
    texts = ["hello", "refund 5 on C-1", "the setup crashes", "track C-1", "lawyers",
             "return policy", "deliveries", "thanks", "", "front desk please",
             "refund", "orders orders", "tech", "bye"] * 2

    async def transcript() -> list[tuple[str, str, list[tuple[str, str]]]]:
        team = shop()
        runner = Runner(team, model=RuleModel(team=team))
        return [(r.status.value, r.output, moves(r))
                for r in [await runner.run("s", t) for t in texts]]

    first = await transcript()
    assert all(status == "completed" for status, _, _ in first)
    assert first == await transcript()
