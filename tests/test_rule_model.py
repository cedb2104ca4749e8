"""`RuleModel`: an offline model that reacts to free text, deterministically, for any
team, and never runs out; and the support team's rules for the demo."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from handoffs import Agent, Handoff, HandoffsError, Runner, RunStatus, Team, tool
from handoffs.examples.support import CONVERSATION, build_team, rule_model
from handoffs.testing import Rule, RuleModel


async def play(runner: Runner, *messages: str, session: str = "s") -> list[Any]:
    return [await runner.run(session, m) for m in messages]


def moves(result: Any) -> list[tuple[str, str, bool]]:
    return [(r.source, r.target, r.returns) for r in result.handoffs]


# -- the support team's rules ---------------------------------------------------------


async def test_support_rules_play_the_demo_conversation_like_the_script() -> None:
    runner = Runner(build_team(), model=rule_model())
    first, second, third = await play(runner, *CONVERSATION)

    assert first.status is RunStatus.COMPLETED and first.agent == "refunds"
    assert moves(first) == [("triage", "billing", False), ("billing", "policy", True),
                            ("billing", "refunds", False)]
    assert "R-0001" in first.output and "$129.00 on A-1001" in first.output
    assert second.agent == "technical" and [r.target for r in second.handoffs] == [
        "triage", "technical"]
    assert "dock firmware" in second.output
    assert third.status is RunStatus.WAITING_FOR_HUMAN and third.agent == "operator"
    assert third.handoffs[0].reason.value == "escalation"
    state = await runner.get_session("s")
    assert state is not None
    assert state.shared["refunds"] == [{"order_id": "A-1001", "amount": 129.0,
                                      "reference": "R-0001"}]


async def test_support_rules_answer_free_text() -> None:
    runner = Runner(build_team(), model=rule_model())
    (charged,) = await play(runner, "I was charged twice for A-1001", session="a")
    assert moves(charged)[-1] == ("billing", "refunds", False)
    assert charged.output.startswith("I've refunded the duplicate charge: Refund of $129.00")

    unknown, once, hello = await play(
        runner, "I was double charged on order b-2222", "charged twice for a-1002",
        "What's the weather like?", session="b")
    assert unknown.agent == "billing"
    assert unknown.output == ("I can't find an order B-2222. Please check the number on "
                              "your receipt.")
    assert once.agent == "refunds" and "charged once" in once.output
    assert hello.agent == "triage" and hello.output.startswith("Hello! I can send you")


async def test_support_rules_stream_text_in_pieces() -> None:
    runner = Runner(build_team(), model=rule_model(stream_chunks=8))
    events = [e async for e in runner.stream("s", "hi there")]
    deltas = [e.data["text"] for e in events if e.type == "text_delta"]
    assert len(deltas) > 1 and "".join(deltas).startswith("Hello! I can send you")


async def test_the_demo_plays_on_the_rules(capsys: pytest.CaptureFixture[str]) -> None:
    from handoffs.demo import run_demo

    assert await run_demo(rules=True) == 0
    out = capsys.readouterr().out
    assert "RULE-BASED" in out
    assert "triage hands off to billing (llm)" in out and "billing asks policy" in out
    assert "refunds: I've refunded the duplicate charge" in out
    assert "technical hands off to operator (escalation)" in out


# -- any team, no rules -----------------------------------------------------------------


class Refund(BaseModel):
    order_id: str
    amount: float


def readme_team() -> Team:
    triage = Agent("triage", instructions="Route the customer.",
                   handoffs=["billing", Handoff("refunds", payload=Refund)])
    billing = Agent("billing", description="Charges and invoices.", handoffs=["triage"])
    refunds = Agent("refunds", description="Issues refunds.", handoffs=["triage"])
    return Team([triage, billing, refunds])


async def test_without_rules_it_routes_by_description_and_answers_politely() -> None:
    runner = Runner(readme_team(), model=RuleModel())
    (invoice,) = await play(runner, "My invoices are wrong", session="a")
    assert moves(invoice) == [("triage", "billing", False)]
    assert invoice.handoffs[0].explanation == "The user mentions: invoices."
    # billing got the message by a handoff: it answers, it does not send it back.
    assert invoice.output == ("(Offline placeholder) A real model would answer “My invoices "
                              "are wrong” here, or hand the conversation to triage. Mention "
                              "one of them, or what it does, to see that happen.")

    (named,) = await play(runner, "Can I talk to Billing?", session="b")
    assert named.agent == "billing"
    # A route that needs a payload is taken only when the message fills it; else it asks.
    (refund,) = await play(runner, "I want refunds", session="c")
    assert refund.agent == "triage" and refund.handoffs == []
    assert refund.output == "To hand this to refunds I need: order_id, amount."
    (filled,) = await play(runner, "Refunds: 12.5 on order A-9", session="d")
    assert filled.handoffs[0].payload == {"order_id": "A-9", "amount": 12.5}


async def test_it_never_runs_out_and_is_deterministic() -> None:
    texts = ["hello", "my invoice", "charged twice", "refund please", "talk to triage",
             "???", "", "billing billing billing", "thanks", "bye"] * 3

    async def transcript() -> list[tuple[str, str, list[tuple[str, str, bool]]]]:
        runner = Runner(readme_team(), model=RuleModel())
        return [(r.status.value, r.output, moves(r)) for r in await play(runner, *texts)]

    first = await transcript()
    assert all(status == "completed" for status, _, _ in first)
    assert first == await transcript()


# -- rules --------------------------------------------------------------------------------


@tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Find an order."""
    return {"order_id": order_id, "amount": 12.5, "status": "shipped"}


@tool
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"refunded {amount!r} on {order_id}"


async def test_rules_call_tools_with_templated_arguments_then_answer() -> None:
    team = Team([Agent("desk", tools=[lookup_order, refund])])
    order = r"(?P<order>A-\d+)"
    model = RuleModel({"desk": [
        Rule(pattern=order, call="lookup_order", args={"order_id": "{order}"}),
        Rule(keywords="refund", pattern=order, call="refund",
             args={"order_id": "{order}", "amount": "{lookup_order[amount]}"}),
        Rule(keywords="refund", pattern=order, answer="Done: {refund}."),
        Rule(pattern=order, answer="{order} is {lookup_order[status]}; it cost "
             "${lookup_order[amount]:.2f}."),
    ]})
    runner = Runner(team, model=model)
    status, done = await play(runner, "where is A-7?", "please refund a-8")

    assert status.output == "A-7 is shipped; it cost $12.50."
    # A whole-placeholder argument keeps its type: the amount is sent as a number.
    assert model.requests[-1].messages[-1].text == "refunded 12.5 on a-8"  # type: ignore[union-attr]
    assert done.output == "Done: refunded 12.5 on a-8."


async def test_handoff_rules_need_the_route_and_never_go_back_to_the_receiver() -> None:
    team = Team([Agent("triage", handoffs=["billing"]),
                 Agent("billing", handoffs=["triage"])])
    model = RuleModel({
        "triage": [Rule(keywords="tech", handoff="technical"),  # no such route: skipped
                   Rule(keywords="bill", handoff="billing", reason="billing: {keyword}")],
        "billing": [Rule(keywords="bill", handoff="triage"),    # triage received it
                    Rule(answer="billing here ({reason})")],
    })
    (result,) = await play(Runner(team, model=model), "tech bill")
    assert moves(result) == [("triage", "billing", False)]
    assert result.output == "billing here (billing: bill)"


async def test_rules_with_say_send_text_with_the_call() -> None:
    team = Team([Agent("tech", handoffs=["human"]), Agent("human", description="A person.")])
    model = RuleModel({"tech": [Rule(keywords="person", handoff="human", say="One moment.")],
                       "human": [Rule(answer="Human here.")]})
    runner = Runner(team, model=model)
    events = [e async for e in runner.stream("s", "a person please")]
    said = [e.data["text"] for e in events if e.type == "message"]
    assert said == ["One moment.", "Human here."]


@pytest.mark.parametrize("kwargs, message", [
    ({}, "exactly one thing"),
    ({"handoff": "a", "answer": "b"}, "exactly one thing"),
    ({"answer": "x", "args": {}}, "args=.... goes with call="),
    ({"call": "x", "reason": "y"}, "go with handoff="),
    ({"answer": "x", "say": "y"}, "say=.... goes with handoff= or call="),
    ({"answer": "x", "pattern": "("}, "not a valid regular expression"),
])
def test_a_rule_that_cannot_work_is_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(HandoffsError, match=message):
        Rule(**kwargs)


async def test_a_delegation_rule_sends_its_task_and_the_delegate_reads_it() -> None:
    team = Team([Agent("billing", handoffs=[Handoff("policy", returns=True)]),
                 Agent("policy")])
    model = RuleModel({
        "billing": [Rule(keywords="refund", handoff="policy", reason="policy check",
                         task="May we refund {order}?", pattern=r"(?P<order>A-\d+)"),
                    Rule(answer="Policy says: {ask_policy}")],
        "policy": [Rule(answer="{source} asked '{text}' ({reason}): yes.")],
    })
    (result,) = await play(Runner(team, model=model), "refund A-5 please")

    assert result.output == "Policy says: billing asked 'May we refund A-5?' (policy check): yes."
    assert result.handoffs[0].extra["task"] == "May we refund A-5?"
