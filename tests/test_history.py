"""Behaviour 4: what the target's model sees; behaviour 5: typed payloads."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from handoffs import Agent, Handoff, Message, RunContext, Runner, Team, tool
from handoffs.core.messages import Note
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: shipped"


def team_with(history: object, **kw: object) -> Team:
    triage = Agent("triage", instructions="You are triage.", tools=[lookup],
                   handoffs=[Handoff("billing", history=history, **kw)])  # type: ignore[arg-type]
    return Team([triage, Agent("billing", instructions="You are billing.")])


def shown(messages: object) -> list[tuple[str, str]]:
    """A view as (role, text), the handoff's note as ("note", its heading)."""
    return [("note", m.text.split("\n", 1)[0]) if isinstance(m, Note) else (m.role, m.text)
            for m in messages]  # type: ignore[attr-defined]


def note_text(messages: object) -> str:
    """The text of the handoff's note in a view ("" when there is none)."""
    return next((m.text for m in messages if isinstance(m, Note)), "")  # type: ignore[attr-defined]


async def target_view(history: object, **kw: object) -> tuple[list[tuple[str, str]], str]:
    """Two turns with triage (one with a tool call), then a handoff; billing's first view
    (the handoff's note shown where it sits) and its system text."""
    model = ScriptedModel([
        reply("Hello, how can I help?"),
        call("lookup", order_id="A1"),
        [reply("Let me get billing."), transfer("billing", reason="billing question")],
        reply("Billing here."),
    ])
    runner = Runner(team_with(history, **kw), model=model)
    await runner.run("s", "hi")
    await runner.run("s", "where is A1 and why was I charged?")
    req = model.requests[-1]
    assert req.agent == "billing"
    return shown(req.messages), req.system


async def test_full_history_includes_tool_traffic_but_not_the_handoff_call() -> None:
    seen, _ = await target_view("full")
    assert seen == [
        ("user", "hi"), ("assistant", "Hello, how can I help?"),
        ("user", "where is A1 and why was I charged?"), ("assistant", ""),
        ("tool", "order A1: shipped"), ("assistant", "Let me get billing."),
        ("note", "# Handoff"),
    ]


async def test_conversation_history_keeps_only_user_and_assistant_text() -> None:
    seen, _ = await target_view("conversation")
    assert seen == [
        ("user", "hi"), ("assistant", "Hello, how can I help?"),
        ("user", "where is A1 and why was I charged?"), ("assistant", "Let me get billing."),
        ("note", "# Handoff"),
    ]


async def test_last_user_history_shows_only_the_latest_user_message() -> None:
    seen, _ = await target_view("last_user")
    assert seen == [("user", "where is A1 and why was I charged?"), ("note", "# Handoff")]


async def test_none_history_shows_nothing_but_the_note() -> None:
    seen, system = await target_view("none")
    assert seen == [("note", "# Handoff")]
    assert system == "You are billing."  # the note is history, not system text


async def test_the_note_gives_the_kind_in_words() -> None:
    model = ScriptedModel([transfer("billing", reason="billing question"), reply("b")])
    await Runner(team_with("none"), model=model).run("s", "hi")
    note = note_text(model.requests[-1].messages)
    assert "triage handed the conversation to you: billing question" in note
    assert "(llm)" not in note  # the kind in words, not its code


async def test_callable_history_filters_the_transcript() -> None:
    def only_users(messages: Sequence[Message]) -> Sequence[Message]:
        return [m for m in messages if m.role == "user"]

    seen, _ = await target_view(only_users)
    assert seen == [("user", "hi"), ("user", "where is A1 and why was I charged?"),
                    ("note", "# Handoff")]


async def test_messages_after_the_handoff_are_seen_in_full() -> None:
    model = ScriptedModel([transfer("billing"), call("lookup", order_id="B2"), reply("done")])
    triage = Agent("triage", handoffs=[Handoff("billing", history="none")])
    billing = Agent("billing", tools=[lookup])
    await Runner(Team([triage, billing]), model=model).run("s", "hi")
    seen = shown(model.requests[-1].messages)
    assert seen == [("note", "# Handoff"), ("assistant", ""), ("tool", "order B2: shipped")]


async def test_transfer_system_message_puts_the_source_instructions_in_the_target() -> None:
    _, system = await target_view("full", transfer_system_message=True)
    assert system.startswith("You are billing.")
    assert "You are triage." in system


async def test_without_transfer_system_message_the_source_instructions_stay_behind() -> None:
    _, system = await target_view("full")
    assert "You are triage." not in system


async def test_handoff_calls_are_never_replayed_to_any_model() -> None:
    model = ScriptedModel([transfer("billing"), transfer("triage"), reply("triage again"),
                           reply("next turn")])
    triage = Agent("triage", handoffs=["billing"])
    billing = Agent("billing", handoffs=["triage"])
    runner = Runner(Team([triage, billing]), model=model)
    await runner.run("s", "one")
    await runner.run("s", "two")
    for req in model.requests:
        for m in req.messages:
            assert not getattr(m, "tool_calls", ()), m
            assert m.role != "tool", m


async def test_a_rejected_handoff_stays_visible_to_the_agent_that_asked() -> None:
    model = ScriptedModel([transfer("nobody"), reply("ok, I'll answer")])
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    await Runner(team, model=model).run("s", "hi")
    roles = [m.role for m in model.requests[1].messages]
    assert roles == ["user", "assistant", "tool"]


class Refund(BaseModel):
    order_id: str
    amount: float


async def test_typed_payload_reaches_the_target_and_the_shared_memory() -> None:
    seen: list[object] = []

    def billing_instructions(ctx: RunContext) -> str:
        seen.append(ctx.handoff.payload if ctx.handoff else None)
        return "You are refunds."

    triage = Agent("triage", handoffs=[Handoff("refunds", payload=Refund)])
    refunds = Agent("refunds", instructions=billing_instructions)
    model = ScriptedModel([
        transfer("refunds", reason="refund due", payload={"order_id": "A1", "amount": 12.5}),
        reply("refunded"),
    ])
    runner = Runner(Team([triage, refunds]), model=model)
    await runner.run("s", "refund me")

    params = model.requests[0].tools[0].parameters  # the payload's fields, top level
    assert params["properties"]["amount"]["type"] == "number"
    assert params["required"] == ["order_id", "amount"]
    assert seen == [Refund(order_id="A1", amount=12.5)]
    state = await runner.get_session("s")
    assert state is not None
    assert state.shared["handoff_context"] == {
        "source_agent": "triage", "handoff_type": "llm", "reason": "refund due",
        "payload": {"order_id": "A1", "amount": 12.5},
        "record_id": state.handoffs[0].id,
    }
    assert '"order_id":"A1"' in note_text(model.requests[1].messages).replace(" ", "")


async def test_disabled_handoffs_are_not_offered_to_the_model() -> None:
    flag = {"on": False}
    triage = Agent("triage", handoffs=[
        Handoff("billing", enabled=False),
        Handoff("tech", enabled=lambda ctx: flag["on"]),
        "sales",
    ])
    team = Team([triage, Agent("billing"), Agent("tech"), Agent("sales")])
    model = ScriptedModel([reply("a"), reply("b")])
    runner = Runner(team, model=model)
    await runner.run("s", "one")
    flag["on"] = True
    await runner.run("s", "two")
    assert [t.name for t in model.requests[0].tools] == ["transfer_to_sales"]
    assert [t.name for t in model.requests[1].tools] == ["transfer_to_tech", "transfer_to_sales"]


async def test_a_disabled_route_called_anyway_is_refused() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", enabled=False)])
    model = ScriptedModel([transfer("billing"), reply("me")])
    result = await Runner(Team([triage, Agent("billing")]), model=model).run("s", "x")
    assert result.handoffs[0].rejection == "target_disabled"
    assert result.agent == "triage"


async def test_a_long_history_reaches_the_target_without_copying_messages() -> None:
    model = ScriptedModel([reply(str(i)) for i in range(50)] + [transfer("billing"),
                                                                reply("b")])
    runner = Runner(team_with("full"), model=model)
    for i in range(50):
        await runner.run("s", f"m{i}")
    await runner.run("s", "go")
    req = model.requests[-1]
    assert len(req.messages) == 102  # 51 user messages + 50 answers + the handoff's note
    assert req.messages[0].text == "m0" and req.messages[-2].text == "go"
    state = runner.store._sessions["s"]  # type: ignore[attr-defined]
    # The very message objects of the transcript: a view, not a copy.
    assert all(a is b for a, b in zip(req.messages[:101], state.messages[:101], strict=True))
