"""Turns that converge: an agent that makes no progress is stopped early, and answers
that should not reach the user are sent back once.

Small models get stuck: the same refused handoff twenty times, the same tool call
seventeen times, a transfer announced in words and never made. Each of these rules is a
bounded, observable reaction (an `agent_nudged` event, a record, a code), never a
silent retry:

- A response whose every call was refused or failed is a step without progress; past
  `HandoffPolicy.max_failed_steps` in a row the agent fails with `no_progress` and the
  team's recovery applies (the fallback, else `stuck_answer`, else FAILED).
- The same handoff refused twice in a row (same target, same code): the agent's next
  requests no longer offer that route's tool.
- A narrated handoff (`core.narration`): the agent is asked once more with its transfer
  tools forced (`HandoffPolicy.narrated_handoffs`).
- An answer in words before the call a forcing `tool_choice` asks for was made in the
  turn (a provider that does not enforce it, or an adapter that relaxed it because the
  model thinks: Anthropic refuses a forced tool choice with extended thinking): not
  delivered; the agent is told to make the call, once; a second answer in words is
  delivered. (`Agent(reset_tool_choice=False)` forces every request: not checked.)
- A refusal echoed to the user: the answer is not delivered; the agent is told why, and
  the step counts as one without progress. So is an answer that quotes what the agent
  was told (`core.narration.quotes`): most of its words from one of the runtime's notes,
  refusals or failed calls' results since the message it answers, or the start of its
  own instructions (on the last word: any part of them), once it has been told
  anything. On the last word, such an answer ends the agent's work (`no_progress`):
  the fallback, else `stuck_answer`, answers instead.
- A response the provider could not read (`malformed_output`), or a tool call written
  as text where no tool reads it (`call_text`): feedback, the forced tool choice
  dropped, and a step without progress. Raw call JSON never reaches the user.
- At the bound, the agent gets a last word: one request without tools. An answer in
  words is delivered; anything else ends the agent's work with `no_progress`.
"""

from __future__ import annotations

import logging

from ...core.messages import AssistantMessage, Note, Reasoning, ToolResult, UserMessage
from ...core.narration import (
    CALL_TEXT,
    NARRATED_HANDOFF,
    REFUSAL_ECHO,
    echoes,
    looks_like_call,
    narrated,
    quotes,
)
from ...log import fields
from ..state import Fail, Leg, Turn, append
from .views import enabled, run_context, window

log = logging.getLogger("handoffs.runtime.converge")  # a stable name (docs/observability.md)

NO_PROGRESS = "no_progress"
"""The code of an agent stopped after `HandoffPolicy.max_failed_steps` steps in a row
without progress."""
MALFORMED_OUTPUT = "malformed_output"
"""The code of a model response the provider could not read (a local server's 500)."""
FORCED_CALL = "forced_call_skipped"
"""The nudge code of an answer in words where the agent's `tool_choice` forced a call."""

NARRATED_NOTE = ("You said you would hand the conversation over, but nothing happened: a "
                 "handoff is made only by calling its tool. Call it now.")
ECHO_NOTE = ("Your last answer was not sent: it repeated a message meant for you, not for "
             "the user. Answer the user's request in your own words, or call a tool.")
LAST_WORD_NOTE = ("Your calls are not getting anywhere, so you have no tools for this "
                  "answer. Answer the user now, in words, with what you know.")
CALL_TEXT_NOTE = ("Your last answer was not sent: it was a tool call written as text. "
                  "Answer the user in words.")
FORCED_NOTE = ("Your last answer was not sent: this step must call {what}, not answer in "
               "words. Call it now.")
MALFORMED_NOTE = ("Your last response could not be read ({detail}). Answer in plain text, "
                  "or call one tool with a JSON object of its arguments.")


def held_back(t: Turn, leg: Leg, text: str, reasoning: tuple[Reasoning, ...] = ()
              ) -> str | None:
    """Whether an answer is kept from the user: `narrated_handoff` (asked once more with
    the transfer tools forced; the text, with the response's `reasoning`, stays as what
    the agent said), `forced_call_skipped`, `refusal_echo` or `call_text` (not
    delivered); None: deliver it."""
    plan = leg.plan
    policy = t.team.policy
    if policy.narrated_handoffs and not leg.nudged and plan.destinations:
        ctx = run_context(t, leg)
        offered = [d for d in plan.destinations if d.tool not in leg.hidden
                   and enabled(plan.routes[d.tool].handoff, ctx)]
        found, tool = narrated(text, offered)
        if found:
            leg.nudged = True
            specs = tuple(plan.routes[d.tool].spec for d in offered)
            leg.force = (specs, tool or "required")
            append(t, leg, AssistantMessage(text, leg.agent.name, (), reasoning))
            t.emit("message", {"agent": leg.agent.name, "text": text})
            _nudge(t, leg, NARRATED_HANDOFF, NARRATED_NOTE)
            return NARRATED_HANDOFF
    agent = leg.agent
    choice = agent.tool_choice
    if (choice is not None and choice != "auto" and choice != "none" and not leg.reminded
            and agent.reset_tool_choice and not leg.last_word and agent.name not in t.forced):
        leg.reminded = True  # forced until the call is made (views.request: the same test)
        what = "one of your tools" if choice == "required" else f"{choice!r}"
        _nudge(t, leg, FORCED_CALL, FORCED_NOTE.format(what=what))
        return FORCED_CALL
    if echoes(text, t.refusals):
        _nudge(t, leg, REFUSAL_ECHO, ECHO_NOTE)
        return REFUSAL_ECHO
    if (leg.failures or leg.last_word or leg.nudged or leg.reminded or t.refusals) and \
            quotes(text, _feedback(t, leg), _instructions(leg), leg.last_word):
        _nudge(t, leg, REFUSAL_ECHO, ECHO_NOTE)
        return REFUSAL_ECHO
    if looks_like_call(text):
        _nudge(t, leg, CALL_TEXT, CALL_TEXT_NOTE)
        return CALL_TEXT
    return None


def _feedback(t: Turn, leg: Leg) -> list[str]:
    """What the runtime told the agent since the message it answers: the notes its
    model reads, its refused or failed calls' results, the handoffs refused in this
    turn (looked for only once it was told something: a step without progress, a nudge,
    a refusal)."""
    told = list(t.refusals)
    seen = window(t, leg)
    for i in range(len(seen) - 1, -1, -1):
        m = seen[i]
        if m.__class__ is UserMessage:
            break
        if m.__class__ is Note or (m.__class__ is ToolResult and m.is_error):
            told.append(m.text)
    return told


def _instructions(leg: Leg) -> str:
    """The agent's system text as its model got it (its instructions when they are
    computed and the text is not kept)."""
    if leg.system is not None:
        return leg.system
    instructions = leg.agent.instructions
    return instructions if isinstance(instructions, str) else ""


def malformed(t: Turn, leg: Leg, detail: str) -> None:
    """A response the provider refused to return because the model's output was broken:
    feedback, and the agent's next request is not forced to call a tool."""
    t.forced = {*t.forced, leg.agent.name}
    _nudge(t, leg, MALFORMED_OUTPUT, MALFORMED_NOTE.format(detail=detail[:200]))


def _nudge(t: Turn, leg: Leg, code: str, note: str) -> None:
    name = leg.agent.name
    append(t, leg, Note(note, name, to_model=True))
    t.emit("agent_nudged", {"agent": name, "code": code, "message": note})
    state = t.state
    log.info("%s nudged (%s)", name, code, extra=fields(state.id, state.turn, name))


def step_done(t: Turn, leg: Leg, results: list[ToolResult | None], moved: bool
              ) -> Fail | None:
    """After a response's calls: a step without progress (every result an error, no
    transfer) is counted, and past the policy's bound the agent fails with `no_progress`."""
    if moved or any(r is not None and not r.is_error for r in results):
        leg.failures = 0
        return None
    return no_progress(t, leg)


def no_progress(t: Turn, leg: Leg) -> Fail | None:
    """Count a step without progress. At the policy's bound the agent gets a last word
    (one request with no tools: answer with what you have); after that, or when that
    answer is not one, it fails with `no_progress`."""
    limit = t.team.policy.max_failed_steps
    leg.failures += 1
    if limit is None or leg.failures < limit:
        return None
    if not leg.last_word:
        leg.last_word = True
        leg.force = ((), None)
        _nudge(t, leg, NO_PROGRESS, LAST_WORD_NOTE)
        return None
    return stuck(leg)


def stuck(leg: Leg) -> Fail:
    """The failure of an agent that made no progress, even with a last word."""
    name = leg.agent.name
    return Fail(NO_PROGRESS, f"{name} made no progress in {leg.failures} steps in a row "
                "(every call refused or failed, then no answer without tools); the turn "
                "stopped trying (HandoffPolicy.max_failed_steps).", name)


def note_refusal(leg: Leg, target: str, code: str) -> None:
    """A handoff of the leg's agent was refused: the second time in a row for the same
    target and reason, the agent is no longer offered that route."""
    key = (target, code)
    if leg.last_refusal == key:
        route = leg.plan.routes_by_target.get(target)
        if route is not None:
            leg.hidden = leg.hidden | {route.tool_name}
    leg.last_refusal = key
