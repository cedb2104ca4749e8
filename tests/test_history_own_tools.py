"""The default history view, `own_tools`: every agent sees the conversation and its own
tool traffic; another agent's tool calls and results stay with that agent unless the
route asks for them (`full`) or the handoff's reason or payload carries them."""

from __future__ import annotations

import random

from pydantic import BaseModel

from handoffs import Agent, Handoff, Runner, Team, tool
from handoffs.core.history import TranscriptViews, render_full, render_own_tools
from handoffs.core.messages import (
    AssistantMessage,
    Message,
    Note,
    ToolCall,
    ToolResult,
    UserMessage,
)
from handoffs.core.session import ViewSpec
from handoffs.models import ModelRequest
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool
def lookup_invoices(customer_id: str) -> str:
    """List a customer's invoices."""
    return f"{customer_id}: INV-1 paid twice"


@tool
def track_package(order_id: str) -> str:
    """Track an order."""
    return f"{order_id}: in transit"


def seen(request: ModelRequest) -> list[tuple[str, str, str]]:
    """The transcript's messages in the request's view (the handoff's note left out)."""
    return [(m.role, m.agent, m.text) for m in request.messages if not is_note(m)]


def is_note(m: Message) -> bool:
    """Whether `m` is a handoff's note (the runtime's, shown at the handoff)."""
    return isinstance(m, Note) and m.text.startswith(("# Handoff", "# Delegation"))


def desk(**route: object) -> Team:
    """triage routes; billing and shipping each have a tool and route back to triage."""
    return Team([
        Agent("triage", handoffs=[Handoff("billing", **route),  # type: ignore[arg-type]
                                  Handoff("shipping", **route)]),  # type: ignore[arg-type]
        Agent("billing", tools=[lookup_invoices], handoffs=["triage"]),
        Agent("shipping", tools=[track_package], handoffs=["triage"]),
    ])


def three_turns() -> ScriptedModel:
    """Turn 1: billing looks invoices up and answers. Turn 2: billing -> triage ->
    shipping, which tracks the package. Turn 3: shipping -> triage -> billing."""
    return ScriptedModel({
        "triage": [transfer("billing"), transfer("shipping"), transfer("billing")],
        "billing": [call("lookup_invoices", customer_id="C-1"), reply("INV-1 was paid twice."),
                    transfer("triage"), reply("Refunded INV-1.")],
        "shipping": [call("track_package", order_id="O-7"), reply("O-7 is in transit."),
                     transfer("triage")],
    })


async def play(runner: Runner, *texts: str) -> None:
    for text in texts:
        await runner.run("s", text)


TURNS = ("charged twice, C-1", "where is O-7?", "refund INV-1 please")


def requests_of(model: ScriptedModel, agent: str) -> list[ModelRequest]:
    return [r for r in model.requests if r.agent == agent]


async def test_the_default_view_is_own_tools() -> None:
    default, own = three_turns(), three_turns()
    await play(Runner(desk(), model=default), *TURNS)
    await play(Runner(desk(history="own_tools"), model=own), *TURNS)
    assert [seen(r) for r in default.requests] == [seen(r) for r in own.requests]


async def test_a_target_does_not_see_another_agents_tool_results() -> None:
    model = three_turns()
    await play(Runner(desk(), model=model), *TURNS)

    shipping = requests_of(model, "shipping")[0]  # turn 2, right after the handoff
    assert seen(shipping) == [
        ("user", "triage", "charged twice, C-1"),
        ("assistant", "billing", "INV-1 was paid twice."),
        ("user", "billing", "where is O-7?"),
    ]
    triage = requests_of(model, "triage")[1]  # billing handed the turn back to triage
    assert "C-1: INV-1 paid twice" not in [m.text for m in triage.messages]


async def test_a_target_sees_its_own_earlier_tool_traffic_when_it_comes_back() -> None:
    model = three_turns()
    await play(Runner(desk(), model=model), *TURNS)

    billing = requests_of(model, "billing")[-1]  # turn 3: back with billing
    assert seen(billing) == [
        ("user", "triage", "charged twice, C-1"),
        ("assistant", "billing", ""),  # its own call, then its own result
        ("tool", "billing", "C-1: INV-1 paid twice"),
        ("assistant", "billing", "INV-1 was paid twice."),
        ("user", "billing", "where is O-7?"),
        ("assistant", "shipping", "O-7 is in transit."),  # shipping's answer, not its call
        ("user", "shipping", "refund INV-1 please"),
    ]


async def test_a_call_made_beside_the_handoff_stays_with_the_source() -> None:
    team = Team([Agent("triage", tools=[track_package], handoffs=["billing"]),
                 Agent("billing")])
    model = ScriptedModel([[call("track_package", order_id="O-7"), transfer("billing")],
                           reply("Billing here.")])
    await Runner(team, model=model).run("s", "charged twice")

    assert seen(requests_of(model, "billing")[0]) == [("user", "triage", "charged twice")]


async def test_what_comes_after_the_handoff_is_seen_in_full_across_turns() -> None:
    model = ScriptedModel({
        "triage": [transfer("billing")],
        "billing": [call("lookup_invoices", customer_id="C-1"), reply("Paid twice."),
                    reply("Refund done.")],
    })
    await play(Runner(desk(), model=model), "charged twice, C-1", "refund it")

    second_turn = requests_of(model, "billing")[-1]
    assert [m.role for m in second_turn.messages if not is_note(m)] == [
        "user", "assistant", "tool", "assistant", "user"]


async def test_a_route_that_asks_for_full_gets_the_sources_tool_results() -> None:
    model = three_turns()
    await play(Runner(desk(), model=model, history="full"), *TURNS)

    shipping = requests_of(model, "shipping")[0]
    assert ("tool", "billing", "C-1: INV-1 paid twice") in seen(shipping)


class Refund(BaseModel):
    invoice: str
    amount: float


async def test_a_payload_carries_what_the_source_found_while_its_results_stay_hidden() -> None:
    team = Team([
        Agent("billing", tools=[lookup_invoices],
              handoffs=[Handoff("refunds", payload=Refund)]),
        Agent("refunds"),
    ])
    model = ScriptedModel({
        "billing": [call("lookup_invoices", customer_id="C-1"),
                    transfer("refunds", reason="duplicate charge", invoice="INV-1",
                             amount=49.0)],
        "refunds": [reply("Refunded 49.00 on INV-1.")],
    })
    result = await Runner(team, model=model).run("s", "charged twice, C-1")

    assert result.output == "Refunded 49.00 on INV-1."
    refunds = requests_of(model, "refunds")[0]
    user, note = refunds.messages
    assert user.role == "user" and is_note(note)
    assert "INV-1" in note.text and "49" in note.text  # the note's payload


async def test_a_delegate_sees_the_conversation_but_not_its_callers_tool_traffic() -> None:
    team = Team([
        Agent("billing", tools=[lookup_invoices],
              handoffs=[Handoff("policy", returns=True)]),
        Agent("policy"),
    ])
    model = ScriptedModel({
        "billing": [call("lookup_invoices", customer_id="C-1"),
                    transfer("policy", task="May INV-1 be refunded?"),
                    reply("Yes, INV-1 will be refunded.")],
        "policy": [reply("Yes, within 30 days.")],
    })
    result = await Runner(team, model=model).run("s", "charged twice, C-1")

    assert result.output == "Yes, INV-1 will be refunded."
    policy = requests_of(model, "policy")[0]
    assert seen(policy) == [("user", "billing", "charged twice, C-1"),
                            ("user", "policy", "May INV-1 be refunded?")]
    back = requests_of(model, "billing")[-1]  # the caller keeps its own traffic
    assert [m.text for m in back.messages if m.role == "tool"] == [
        "C-1: INV-1 paid twice", "Yes, within 30 days."]


async def test_a_delegation_that_asks_for_full_shows_the_callers_tool_results() -> None:
    team = Team([
        Agent("billing", tools=[lookup_invoices],
              handoffs=[Handoff("policy", returns=True, history="full")]),
        Agent("policy"),
    ])
    model = ScriptedModel({
        "billing": [call("lookup_invoices", customer_id="C-1"),
                    transfer("policy", task="May INV-1 be refunded?"), reply("Yes.")],
        "policy": [reply("Yes, within 30 days.")],
    })
    await Runner(team, model=model).run("s", "charged twice, C-1")

    policy = requests_of(model, "policy")[0]
    assert "C-1: INV-1 paid twice" in [m.text for m in policy.messages]


async def test_without_tool_traffic_the_view_is_the_transcript_itself() -> None:
    model = ScriptedModel([reply(str(i)) for i in range(30)] + [transfer("billing"),
                                                                reply("b")])
    runner = Runner(desk(), model=model)
    for i in range(30):
        await runner.run("s", f"m{i}")
    await runner.run("s", "go")

    req = model.requests[-1]
    state = runner.store._sessions["s"]  # type: ignore[attr-defined]
    assert len(req.messages) == 62  # 31 user messages, 30 answers, the handoff's note
    assert all(a is b for a, b in zip(req.messages[:61], state.messages, strict=False))


# The incremental renderings against the rule, applied from scratch.

AGENTS = ("a", "b", "c")


def random_message(rng: random.Random, n: int) -> Message:
    agent = rng.choice(AGENTS)
    kind = rng.randrange(7)
    if kind == 0:
        return UserMessage(f"u{n}", agent)
    if kind == 1:
        return AssistantMessage(f"t{n}", agent)
    if kind == 2:
        mark = rng.choice((None, "transferred", "rejected", "delegated"))
        return AssistantMessage(rng.choice(("", f"t{n}")), agent,
                                (ToolCall(f"c{n}", "f", "{}", mark),))
    if kind == 3:
        return ToolResult(f"c{n}", "f", f"r{n}", agent,
                          handoff=rng.choice((None, "transferred", "rejected")))
    if kind == 4:
        return Note(f"n{n}", agent, to_model=rng.random() < 0.5)
    if kind == 5:
        return AssistantMessage("", agent)
    return UserMessage(f"u{n}", agent)


def by_the_rule(messages: list[Message], agent: str, pivot: int) -> list[Message]:
    before = [render_full(m) for m in messages[:pivot]]
    after = [render_full(m) for m in messages[pivot:]]
    mine = [render_own_tools(m, agent) for m in before if m is not None]
    return [m for m in mine if m is not None] + [m for m in after if m is not None]


def test_the_kept_renderings_match_the_rule_at_every_step() -> None:
    rng = random.Random(32)
    for _ in range(40):
        views = TranscriptViews()
        messages: list[Message] = []
        for n in range(rng.randrange(5, 60)):
            messages.append(random_message(rng, n))
            if rng.random() < 0.3:
                agent = rng.choice(AGENTS)
                pivot = rng.randrange(len(messages) + 1)
                got = views.window(messages, ViewSpec("own_tools", 0, pivot), None, agent)
                want = by_the_rule(messages, agent, pivot)
                assert [m.to_dict() for m in got] == [m.to_dict() for m in want]


async def test_a_delegate_asked_again_sees_what_it_answered_before() -> None:
    """langgraph-supervisor's test_worker_hide_handoffs: a supervisor delegates to a
    worker, says "boo", and delegates again on the next turn. The worker sees the user's
    first message, its own first answer (as its own assistant message), the supervisor's
    "boo" and the new message; none of the supervisor's tool traffic."""
    @tool
    def echo_tool(text: str) -> str:
        """Echo the input text."""
        return text

    team = Team([Agent("supervisor", handoffs=[Handoff("echo_agent", returns=True)]),
                 Agent("echo_agent", tools=[echo_tool])])
    model = ScriptedModel({
        "supervisor": [transfer("echo_agent"), reply("boo"), transfer("echo_agent"),
                       reply("END")],
        "echo_agent": [reply("Echo 1!"), reply("Echo 2!")]})
    runner = Runner(team, model=model)
    await runner.run("s", "Scooby-dooby-doo")
    await runner.run("s", "Huh take two?")
    worker = [r for r in model.requests if r.agent == "echo_agent"]
    assert seen(worker[0]) == [("user", "supervisor", "Scooby-dooby-doo")]
    assert seen(worker[1]) == [
        ("user", "supervisor", "Scooby-dooby-doo"),
        ("assistant", "echo_agent", "Echo 1!"),
        ("assistant", "supervisor", "boo"),
        ("user", "supervisor", "Huh take two?"),
    ]
    assert all(not getattr(m, "tool_calls", ()) for m in worker[1].messages)


async def test_a_delegate_sees_the_tasks_it_was_given_and_its_answers_not_others() -> None:
    """A delegate given a task sees, on a later delegation, that task and its answer; a
    second delegate's task and answer stay hidden from it (the caller's tool traffic)."""
    team = Team([Agent("lead", handoffs=[Handoff("billing", returns=True),
                                         Handoff("shipping", returns=True)]),
                 Agent("billing"), Agent("shipping")])
    model = ScriptedModel({
        "lead": [transfer("billing", task="Was INV-1 paid twice?"),
                 transfer("shipping", task="Where is O-7?"), reply("Both checked."),
                 transfer("billing", task="Refund INV-1."), reply("Refunded.")],
        "billing": [reply("Yes, twice."), reply("Refunded INV-1.")],
        "shipping": [reply("In transit.")]})
    runner = Runner(team, model=model)
    await runner.run("s", "Check my invoice and my parcel")
    await runner.run("s", "Please refund it")
    later = [r for r in model.requests if r.agent == "billing"][-1]
    assert seen(later) == [
        ("user", "lead", "Check my invoice and my parcel"),
        ("user", "billing", "Was INV-1 paid twice?"),
        ("assistant", "billing", "Yes, twice."),
        ("assistant", "lead", "Both checked."),
        ("user", "lead", "Please refund it"),
        ("user", "billing", "Refund INV-1."),
    ]


async def test_an_agent_that_answered_as_a_delegate_sees_its_answers_once_active() -> None:
    """The same holds when the former delegate becomes the active agent by a transfer."""
    team = Team([Agent("lead", handoffs=[Handoff("billing", returns=True),
                                         Handoff("shipping")]),
                 Agent("billing"), Agent("shipping", tools=[track_package])])
    model = ScriptedModel({
        "lead": [transfer("billing"), reply("Billing says yes."), transfer("shipping")],
        "billing": [reply("Yes, paid twice.")],
        "shipping": [call("track_package", order_id="O-7"), reply("In transit.")]})
    runner = Runner(team, model=model)
    await runner.run("s", "Was I charged twice?")
    await runner.run("s", "And my parcel?")
    state = await runner.store.load("s")
    assert state is not None
    window = TranscriptViews().window(
        state.messages, ViewSpec("own_tools", 0, len(state.messages)), agent="billing")
    assert ("assistant", "billing", "Yes, paid twice.") in [
        (m.role, m.agent, m.text) for m in window]
    assert not any(getattr(m, "tool_calls", ()) or m.role == "tool" for m in window)
