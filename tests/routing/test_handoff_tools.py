"""The handoff tool as a model sees it: payload fields beside `reason` at the top level,
`ask_<agent>` for a delegation, extra keys ignored, a refusal that shows a call that
works, and the source side's instructions."""

from __future__ import annotations

from pydantic import BaseModel, Field

from handoffs import Agent, Handoff, Runner, Team
from handoffs.core.handoff_tool import DEFAULT_HANDOFF_INSTRUCTIONS
from handoffs.core.messages import Note, ToolResult
from handoffs.testing import ScriptedModel, call, reply, transfer


class Refund(BaseModel):
    order_id: str = Field(examples=["A-1001"])
    amount: float = Field(gt=0)


def refunds_team(**team: object) -> Team:
    return Team([Agent("billing", handoffs=[Handoff("refunds", payload=Refund), "tech",
                                            Handoff("policy", returns=True)]),
                 Agent("refunds"), Agent("tech"), Agent("policy")], **team)  # type: ignore[arg-type]


async def test_payload_fields_are_top_level_arguments_beside_the_reason() -> None:
    # The small model's report: transfer_to_refunds(order_id=..., amount=...) refused
    # twenty times because the fields were nested under `payload`.
    model = ScriptedModel([call("transfer_to_refunds", reason="double charge",
                                order_id="A-1001", amount=129.0), reply("Refunded.")])

    result = await Runner(refunds_team(), model=model).run("s", "charged twice")

    params = model.requests[0].tools[0].parameters
    assert list(params["properties"]) == ["reason", "order_id", "amount"]
    assert params["required"] == ["order_id", "amount"]
    (record,) = result.handoffs
    assert record.accepted and record.payload == {"order_id": "A-1001", "amount": 129.0}
    assert result.agent == "refunds"


async def test_the_old_nested_shape_is_still_accepted() -> None:
    model = ScriptedModel([transfer("refunds", reason="r",
                                    payload={"order_id": "A-1", "amount": 5}), reply("ok")])

    result = await Runner(refunds_team(), model=model).run("s", "refund")

    assert result.handoffs[0].accepted and result.handoffs[0].payload == {
        "order_id": "A-1", "amount": 5}


async def test_a_payload_field_named_like_an_argument_keeps_the_nested_shape() -> None:
    class Ticket(BaseModel):
        reason: str

    team = Team([Agent("a", handoffs=[Handoff("b", payload=Ticket)]), Agent("b")])
    spec = team.plan("a").specs[0]
    assert set(spec.parameters["properties"]) == {"reason", "payload"}
    model = ScriptedModel([transfer("b", reason="why", payload={"reason": "inner"}),
                           reply("ok")])
    result = await Runner(team, model=model).run("s", "x")
    assert result.handoffs[0].payload == {"reason": "inner"}


async def test_extra_arguments_on_a_route_without_payload_are_ignored_and_recorded() -> None:
    # The 1.5B model: 14 of 22 refused handoffs were transfer_to_technical(order_id=...)
    model = ScriptedModel([transfer("tech", reason="dock", order_id="A-1002"), reply("ok")])

    result = await Runner(refunds_team(), model=model).run("s", "my dock")

    (record,) = result.handoffs
    assert record.accepted and result.agent == "tech"
    assert record.extra["ignored_arguments"] == ["order_id"]


async def test_a_refusal_for_bad_arguments_shows_a_literal_call_that_works() -> None:
    model = ScriptedModel([call("transfer_to_refunds", reason="r", order_id="A-1",
                                amount=-3), reply("sorry")])

    result = await Runner(refunds_team(), model=model).run("s", "refund")

    record = result.handoffs[0]
    assert record.rejection == "invalid_payload"
    assert ('A call that works: transfer_to_refunds({"reason": "<reason>", "order_id": '
            '"A-1001", "amount": 0})') in record.message
    results = [m for m in model.requests[1].messages if isinstance(m, ToolResult)]
    assert results[-1].text == record.message  # what the model read


async def test_a_delegation_is_offered_as_ask_and_transfer_to_still_reaches_it() -> None:
    team = refunds_team()
    names = [s.name for s in team.plan("billing").specs]
    assert names == ["transfer_to_refunds", "transfer_to_tech", "ask_policy"]
    spec = team.plan("billing").routes_by_target["policy"].spec
    assert spec.description == "Ask policy and get the answer back."

    for step in (transfer("policy", task="Allowed?"),                  # testing helper
                 call("ask_policy", task="Allowed?"),                  # the tool's name
                 call("transfer_to_policy", task="Allowed?")):          # the old name
        model = ScriptedModel([step, reply("yes"), reply("Allowed, refunding.")])
        result = await Runner(team, model=model).run("s", "refund?")
        assert result.output == "Allowed, refunding."
        assert result.handoffs[0].returns and result.handoffs[0].accepted
        assert model.requests[1].agent == "policy"


async def test_a_delegate_with_no_task_sees_the_users_message_once() -> None:
    team = Team([Agent("billing", handoffs=[Handoff("policy", returns=True,
                                                    history="full")]),
                 Agent("policy")])
    model = ScriptedModel([call("ask_policy"), reply("yes"), reply("done")])

    await Runner(team, model=model).run("s", "Is a refund allowed?")

    seen = [m.text for m in model.requests[1].messages]
    assert seen.count("Is a refund allowed?") == 1


async def test_records_keep_the_order_of_the_responses_calls() -> None:
    # A refused second transfer used to be recorded before the accepted first one.
    model = ScriptedModel([[transfer("refunds", order_id="A", amount=1),
                            transfer("tech", reason="second")], reply("ok")])

    runner = Runner(refunds_team(), model=model)
    result = await runner.run("s", "x")

    assert [(r.target, r.accepted, r.rejection) for r in result.handoffs] == [
        ("refunds", True, None), ("tech", False, "multiple_handoffs")]
    state = await runner.get_session("s")
    assert state is not None
    assert [r.target for r in state.handoffs] == ["refunds", "tech"]


def test_agents_with_routes_are_told_how_a_transfer_is_made() -> None:
    team = refunds_team()
    assert team.plan("billing").handoff_text.startswith(DEFAULT_HANDOFF_INSTRUCTIONS)
    assert "An ask_ tool brings another agent's answer back" in team.plan("billing").handoff_text
    assert team.plan("refunds").handoff_text == ""  # no routes, nothing to say


async def test_the_handoff_instructions_can_be_replaced_or_turned_off() -> None:
    off = refunds_team(handoff_instructions=False)
    assert off.plan("billing").handoff_text == ""
    own = refunds_team(handoff_instructions="Transfer with the tools.")
    assert own.plan("billing").handoff_text == "Transfer with the tools."
    agent_off = Team([Agent("a", instructions="A.", handoffs=["b"],
                            handoff_instructions=False), Agent("b")])
    model = ScriptedModel([reply("hi")])
    await Runner(agent_off, model=model).run("s", "hi")
    assert model.requests[0].system == "A."


def texts(request: object) -> list[str]:
    """What a request's history says, message by message (the handoff's note included)."""
    return [m.text for m in request.messages]  # type: ignore[attr-defined]


async def test_the_handoff_note_gives_the_kind_in_words() -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = ScriptedModel([transfer("billing", reason="a charge"), reply("ok")])
    await Runner(team, model=model).run("s", "x")
    request = model.requests[1]
    assert request.system == ""  # the note is in the history, at the handoff
    user, note = request.messages
    assert user.text == "x" and isinstance(note, Note) and note.to_model
    assert "triage handed the conversation to you: a charge" in note.text
    assert "Answer the user now; do not mention the transfer." in note.text
    assert "(llm)" not in note.text


async def test_one_way_routes_ask_the_provider_for_one_call_per_response() -> None:
    tools_only = Team([Agent("a", handoffs=[Handoff("b", returns=True)]), Agent("b")])
    opted_in = Team([Agent("a", handoffs=["b"], parallel_tool_calls=True), Agent("b")])
    model = ScriptedModel([reply("x")] * 3)
    await Runner(refunds_team(), model=model).run("1", "x")
    await Runner(tools_only, model=model).run("2", "x")
    await Runner(opted_in, model=model).run("3", "x")
    assert [r.parallel_tool_calls for r in model.requests] == [False, None, True]


async def test_the_note_stays_at_the_handoff_once_the_target_has_answered() -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = ScriptedModel([transfer("billing", reason="a charge"), reply("Fixed."),
                           reply("You're welcome.")])
    runner = Runner(team, model=model)
    await runner.run("s", "I was charged twice")
    await runner.run("s", "thanks")

    taking_over, later = model.requests[1], model.requests[2]
    assert "triage handed the conversation to you: a charge" in texts(taking_over)[1]
    assert "Answer the user now" in texts(taking_over)[1]
    # The later request extends the earlier one: the note is history, where it happened.
    assert texts(later) == [*texts(taking_over), "Fixed.", "thanks"]
    assert later.system == taking_over.system


async def test_after_a_next_turn_transfer_the_note_precedes_the_targets_turn() -> None:
    team = Team([Agent("triage", handoffs=[Handoff("billing", respond="next_turn")]),
                 Agent("billing")])
    model = ScriptedModel([transfer("billing", reason="a charge"), reply("Fixed."),
                           reply("You're welcome.")])
    runner = Runner(team, model=model)
    await runner.run("s", "I was charged twice")
    await runner.run("s", "so?")
    await runner.run("s", "thanks")

    assert [r.agent for r in model.requests] == ["triage", "billing", "billing"]
    first = texts(model.requests[1])
    # The note sits where the handoff happened, before the user's next message.
    assert first[0] == "I was charged twice" and first[-1] == "so?"
    assert "Answer the user now" in first[1]
    assert texts(model.requests[2]) == [*first, "Fixed.", "thanks"]


async def test_a_payload_stays_in_the_note_in_later_turns() -> None:
    model = ScriptedModel([transfer("refunds", order_id="A-1", amount=2.5), reply("Done."),
                           reply("Still A-1.")])
    runner = Runner(refunds_team(), model=model)
    await runner.run("s", "refund A-1")
    await runner.run("s", "which order was it?")

    later = model.requests[2]
    assert '"order_id":"A-1"' in texts(later)[1].replace(" ", "")
    assert "order_id" not in later.system


def test_a_route_without_payload_does_not_forbid_extra_arguments_it_ignores() -> None:
    team = refunds_team()
    tech = team.plan("billing").routes_by_target["tech"].spec.parameters
    refunds = team.plan("billing").routes_by_target["refunds"].spec.parameters
    assert "additionalProperties" not in tech
    assert refunds["additionalProperties"] is False  # the payload's own fields
