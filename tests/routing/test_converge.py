"""Turns that converge: narrated handoffs asked once more, refusals not echoed to the
user, stuck agents stopped early through the team's recovery, refused routes withdrawn,
unreadable responses answered with feedback."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffPolicy, Runner, RunStatus, Team, tool
from handoffs.core.messages import Note
from handoffs.core.narration import destination, echoes, looks_like_call, narrated
from handoffs.errors import ModelError
from handoffs.testing import ScriptedModel, reply, transfer


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: charged twice"


def team(**policy: object) -> Team:
    return Team([
        Agent("triage", handoffs=["billing", "tech"]),
        Agent("billing", display_name="Billing team", tools=[lookup],
              handoffs=["refunds", "triage"]),
        Agent("refunds"), Agent("tech", display_name="Tech support"),
    ], fallback="triage", policy=HandoffPolicy(**policy))  # type: ignore[arg-type]


def nudges(result: object) -> list[str]:
    return [e["code"] for e in result.events if e.type == "agent_nudged"]  # type: ignore[attr-defined]


async def test_a_narrated_handoff_is_asked_once_more_with_the_named_tool_forced() -> None:
    model = ScriptedModel([reply("I'll transfer you to billing right away."),
                           transfer("billing", reason="a charge"), reply("Billing here.")])

    result = await Runner(team(), model=model).run("s", "I was charged twice")

    assert (result.agent, result.output) == ("billing", "Billing here.")
    forced = model.requests[1]
    assert forced.tool_choice == "transfer_to_billing"
    assert [t.name for t in forced.tools] == ["transfer_to_billing", "transfer_to_tech"]
    assert "a handoff is made only by calling its tool" in forced.messages[-1].text
    assert nudges(result) == ["narrated_handoff"]
    said = [e["text"] for e in result.events if e.type == "message"]
    assert said == ["I'll transfer you to billing right away.", "Billing here."]


async def test_a_narration_in_another_language_forces_a_transfer_tool() -> None:
    model = ScriptedModel([reply("Je vous mets en relation avec notre équipe."),
                           transfer("tech", reason="panne"), reply("Support technique.")])

    result = await Runner(team(), model=model).run("s", "mon écran est noir")

    assert model.requests[1].tool_choice == "required" and result.agent == "tech"


async def test_a_false_positive_never_blocks_the_answer() -> None:
    model = ScriptedModel([reply("I'll transfer you to billing if it is about a charge."),
                           reply("Is this about a charge or a product problem?")])

    result = await Runner(team(), model=model).run("s", "hello")

    assert result.status is RunStatus.COMPLETED and result.agent == "triage"
    assert result.output == "Is this about a charge or a product problem?"
    assert len(model.requests) == 2


async def test_narrated_handoffs_can_be_turned_off() -> None:
    model = ScriptedModel([reply("I'll transfer you to billing.")])
    result = await Runner(team(narrated_handoffs=False), model=model).run("s", "x")
    assert result.output == "I'll transfer you to billing." and len(model.requests) == 1


async def test_a_refusal_echoed_to_the_user_is_not_delivered() -> None:
    # The 1.5B model answered a user with the loop rule's sentence.
    model = ScriptedModel([
        transfer("nobody"),
        reply("There is no agent named 'nobody'. You can hand off to: billing, tech."),
        reply("How can I help you today?"),
    ])

    result = await Runner(team(), model=model).run("s", "hi")

    assert result.output == "How can I help you today?"
    assert nudges(result) == ["refusal_echo"]
    state_texts = [m.text for m in model.requests[2].messages if isinstance(m, Note)]
    assert any("meant for you, not for the user" in t for t in state_texts)


async def test_a_stuck_agent_ends_through_the_fallback_long_before_max_steps() -> None:
    stuck = [transfer("nobody")] * 4
    model = ScriptedModel({"billing": stuck, "triage": [transfer("billing"),
                                                        reply("Let me help you myself.")]})
    result = await Runner(team(), model=model, max_steps=20).run("s", "charged twice")

    assert result.status is RunStatus.COMPLETED
    assert (result.agent, result.output) == ("triage", "Let me help you myself.")
    recovery = result.handoffs[-1]
    assert recovery.reason.value == "error_recovery"
    assert recovery.extra["error"]["code"] == "no_progress"
    assert len(model.requests) == 6  # triage, 3 refused, a last word, triage again


async def test_with_no_fallback_a_stuck_turn_gives_the_policys_answer_or_fails() -> None:
    lone = Team([Agent("a", handoffs=["b"]), Agent("b")],
                policy=HandoffPolicy(stuck_answer="Sorry, I could not do that."))
    result = await Runner(lone, model=ScriptedModel([transfer("x")] * 5)).run("s", "hi")
    assert (result.status, result.output) == (RunStatus.COMPLETED,
                                              "Sorry, I could not do that.")

    plain = Team([Agent("a", handoffs=["b"]), Agent("b")])
    failed = await Runner(plain, model=ScriptedModel([transfer("x")] * 5)).run("s", "hi")
    assert failed.error is not None and failed.error.code == "no_progress"


async def test_the_same_refused_handoff_twice_withdraws_that_route() -> None:
    # billing -> refunds refused twice by the loop rule: the route is no longer offered.
    model = ScriptedModel({
        "triage": [transfer("billing")],
        "billing": [transfer("tech"), transfer("tech"), reply("I'll look into it.")],
    })

    result = await Runner(team(), model=model).run("s", "x")

    billing = [r for r in model.requests if r.agent == "billing"]
    assert "transfer_to_triage" in [t.name for t in billing[1].tools]
    assert [r.rejection for r in result.handoffs[1:]] == ["not_declared", "not_declared"]
    # tech was never a route of billing: nothing to withdraw; a declared one is:
    model = ScriptedModel({
        "triage": [transfer("billing")],
        "billing": [transfer("triage"), transfer("triage"), reply("Answer.")],
    })
    result = await Runner(team(max_handoffs_per_turn=1), model=model).run("t", "x")
    billing = [r for r in model.requests if r.agent == "billing"]
    assert [r.rejection for r in result.handoffs[1:]] == ["too_many_handoffs"] * 2
    assert "transfer_to_triage" in [t.name for t in billing[1].tools]
    assert "transfer_to_triage" not in [t.name for t in billing[2].tools]


async def test_a_malformed_response_is_feedback_without_a_forced_tool() -> None:
    model = ScriptedModel([
        ModelError("local answered 500: the model's output could not be read",
                   "malformed_output", status=500),
        reply("Here is my answer."),
    ])
    forced = Team([Agent("a", handoffs=["b"], tool_choice="required"), Agent("b")])

    result = await Runner(forced, model=model).run("s", "hi")

    assert result.output == "Here is my answer."
    assert model.requests[0].tool_choice == "required"
    assert model.requests[1].tool_choice == "auto"
    assert nudges(result) == ["malformed_output"]


@pytest.mark.parametrize(("text", "tool"), [
    ("I'll transfer you to billing.", "transfer_to_billing"),
    ("Let me connect you with our Tech support team!", "transfer_to_tech"),
    ("Transferring you to the billing team now.", "transfer_to_billing"),
    ("Je vous transfère au service de facturation.", None),
    ("Ich verbinde Sie mit dem technischen Support.", None),
    ("Le paso con el equipo de facturación.", None),
])
def test_narrations_are_recognised_in_several_languages(text: str, tool: str | None) -> None:
    routes = [destination("transfer_to_billing", "billing", "Billing"),
              destination("transfer_to_tech", "tech", "Tech support")]
    assert narrated(text, routes) == (True, tool)


@pytest.mark.parametrize("text", [
    "Would you like me to look at your invoice?",
    "I can't transfer you to billing, but I can help.",
    "I'll send you an email with the invoice.",
    "Billing handles charges; I handle everything else.",
])
def test_ordinary_answers_are_not_narrations(text: str) -> None:
    routes = [destination("transfer_to_billing", "billing", "Billing")]
    assert narrated(text, routes) == (False, None)


def test_echoes_and_call_shaped_text_are_recognised() -> None:
    assert echoes("The conversation is already handled by technical 2 times recently.")
    assert echoes("Sure. Only one handoff per response: the handoff to 'a' came first")
    assert not echoes("Your refund of $129 is on its way.")
    assert looks_like_call('{"name": "lookup", "arguments": {"order_id": "A-1"}}')
    assert looks_like_call('```json\n[{"name": "x", "arguments": {}}]\n```')
    assert not looks_like_call('{"name": "Bob", "age": 3}')
    assert not looks_like_call("Call lookup with your order number.")


# Every verb of every promise pattern, each in a sentence the patterns match: the stems
# that let an answer skip the patterns must leave each of them recognised.
PROMISES = [
    *(f"I'll {v} you to billing." for v in (
        "transfer", "connect", "hand", "pass", "forward", "route", "redirect", "escalate",
        "put you through", "bring in", "loop in", "send you")),
    *(f"{v} you to billing now." for v in (
        "Transferring", "Connecting", "Handing", "Passing", "Forwarding", "Routing",
        "Redirecting")),
    *(f"You are now being {v} to billing." for v in (
        "transferred", "connected", "redirected", "routed", "forwarded")),
    *(f"Je vais vous {v} au service." for v in (
        "transférer", "mettre en relation", "rediriger", "passer", "connecter",
        "orienter")),
    "Je vous mets en relation avec le service.", "JE TRANSMETS VOTRE demande.",
    "Je redirige votre appel.", "Laissez-moi vous mettre en contact.",
    *(f"Ich {v} Sie weiter." for v in (
        "leite", "verbinde", "übergebe", "uebergebe", "gebe", "stelle", "schicke")),
    *(f"Ich werde Ihre Anfrage {v}." for v in (
        "weiterleiten", "verbinden", "übergeben", "uebergeben", "weitergeben")),
    "Sie werden jetzt weitergeleitet.", "Sie werden verbunden.",
    *(f"Te {v} con facturación." for v in (
        "transfiero", "paso", "comunico", "conecto", "redirijo", "derivo")),
    *(f"Voy a {v} con facturación." for v in (
        "transferir", "pasar", "comunicar", "conectar", "redirigir", "derivar")),
    *(f"Ti {v} con la fatturazione." for v in (
        "trasferisco", "metto in contatto", "passo", "inoltro")),
    *(f"Vou {v} para o financeiro." for v in (
        "transferir", "encaminhar", "passar", "conectar")),
]


@pytest.mark.parametrize("text", PROMISES)
def test_every_promise_the_patterns_know_is_still_recognised(text: str) -> None:
    from handoffs.core.narration import _patterns

    routes = [destination("transfer_to_billing", "billing", "Billing")]
    for t in (f"{text} (Billing)", f"{text} (Billing)".upper()):
        assert _patterns()[0].search(t) is not None, t  # the sample is a promise
        assert narrated(t, routes) == (True, "transfer_to_billing"), t


def test_a_long_ordinary_answer_is_neither_a_narration_nor_an_echo() -> None:
    # The promise patterns and the echo markers, searched ignoring case, took about
    # 300 µs for a 1 KB answer; the answer is now lowered once and searched for pieces.
    routes = [destination("transfer_to_billing", "billing", "Billing")]
    text = "Your refund of $129 is on its way; it takes five working days. " * 16
    assert narrated(text, routes) == (False, None) and not echoes(text)
    assert echoes(text.upper() + " ONLY ONE HANDOFF PER RESPONSE")


def test_no_promise_is_shorter_than_the_length_short_answers_are_skipped_below() -> None:
    import re._parser

    from handoffs.core import narration

    shortest = min(re._parser.parse(p, re.IGNORECASE).getwidth()[0]
                   for p in narration._PROMISES)
    assert shortest >= narration._SHORTEST_PROMISE


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: shipped"


STUCK = "Sorry, I could not finish that; a colleague will follow up."
CLERK = "You are an AI assistant. Help customers with their orders."
QUOTED = [
    # What a small real model answered on its last word, after nudges and refusals: the
    # runtime's feedback, and its own system text, quoted back.
    "You last answer was not sent: it was a tool call written as text…",
    "You call lookup_order again.",
    "You are an AI assistant.",
]


def clerk() -> Team:
    return Team([Agent("clerk", instructions=CLERK, tools=[lookup_order])],
                policy=HandoffPolicy(stuck_answer=STUCK))


def stuck_then(answer: str) -> ScriptedModel:
    """The same call again and again (refused as repeated), then, on the last word with
    no tools, `answer`."""
    from handoffs.testing import call

    return ScriptedModel([call("lookup_order", order_id="A-1")] * 5 + [reply(answer)])


@pytest.mark.parametrize("answer", QUOTED)
async def test_a_last_word_that_quotes_the_runtime_or_the_instructions_is_never_delivered(
        answer: str) -> None:
    model = stuck_then(answer)
    result = await Runner(clerk(), model=model).run("s", "Where is my order A-1?")

    assert model.remaining == 0  # the answer was given, on the last word
    assert (result.status, result.output) == (RunStatus.COMPLETED, STUCK)
    assert answer not in [e["text"] for e in result.events if e.type == "message"]
    assert nudges(result) == ["no_progress", "refusal_echo"]


async def test_a_last_word_in_the_agents_own_words_is_delivered() -> None:
    model = stuck_then("Your order A-1 has shipped.")
    result = await Runner(clerk(), model=model).run("s", "Where is my order A-1?")
    assert result.output == "Your order A-1 has shipped."
    assert nudges(result) == ["no_progress"]


async def test_an_answer_that_quotes_a_refusal_it_got_is_asked_again() -> None:
    # Before the last word: not delivered, the agent is told why and answers again.
    model = ScriptedModel([transfer("nobody"), reply("Hand off to nobody: no agent."),
                           reply("How can I help you today?")])
    result = await Runner(team(), model=model).run("s", "hi")
    assert result.output == "How can I help you today?"
    assert nudges(result) == ["refusal_echo"]


def test_quotes_are_told_from_answers() -> None:
    from handoffs.core.narration import quotes

    told = ["repeated_tool_call: lookup_order was already called 3 times with these "
            "arguments in this turn and is not run again. Use the result you have."]
    assert quotes("You call lookup_order again.", told)
    assert not quotes("Your order A-1 has shipped.", told)
    assert not quotes("You are welcome.", ["Your calls are not getting anywhere."])
    assert quotes("You are an AI assistant.", [], CLERK)
    assert not quotes("Help customers with their orders.", [], CLERK)  # not its start
    assert quotes("Help customers with their orders.", [], CLERK, anywhere=True)
    assert not quotes("Your order A-1 has shipped.", [], CLERK, anywhere=True)


def test_a_short_answer_in_common_words_is_not_a_quote() -> None:
    from handoffs.core.narration import quotes

    told = ["The arguments of 'store' do not match its schema: the data is nested too "
            "deeply to validate. Call it again with corrected arguments."]
    assert not quotes("Could not store it.", told)
    assert not quotes("Sorry, I could not do that.", told)
