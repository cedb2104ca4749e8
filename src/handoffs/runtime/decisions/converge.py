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

from typing import Any

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
from ..state import Fail, Leg, Turn
from .views import enabled, run_context, window

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


class Nudge:
    """The agent is told why it is asked again: `note` goes into its line (its model
    reads it) and an `agent_nudged` event with `code` says so. (The values of this
    module are plain slotted classes: a dataclass costs more to import.)"""

    __slots__ = ("code", "note")

    def __init__(self, code: str, note: Note) -> None:
        self.code = code
        self.note = note


class Again:
    """A step that did not end the agent's work as an answer or a move would: what its
    line gets, in order, and its counters after it; then it fails (`fail`) or, None, is
    asked again. The driver applies it (`driver.loop`); a value, never changed."""

    __slots__ = ("fail", "failures", "force", "forced", "invalid", "last_word", "notes",
                 "nudged", "reminded", "said", "truncated")

    def __init__(self, notes: tuple[Note | Nudge, ...] = (),
                 said: AssistantMessage | None = None, fail: Fail | None = None, *,
                 failures: int | None = None, last_word: bool | None = None,
                 nudged: bool | None = None, reminded: bool | None = None,
                 force: tuple[tuple[Any, ...], str | None] | None = None,
                 truncated: int | None = None, invalid: int | None = None,
                 forced: bool = False) -> None:
        self.notes = notes
        """Feedback into the line, in order (after `said`); a `Nudge` is also an event."""
        self.said = said
        """An answer kept in the line as what the agent said, not delivered (a narrated
        handoff, an answer not of its output type): a `message` event, before the notes."""
        self.fail = fail
        """The agent fails (after the rest is applied); None: it is asked again."""
        self.failures = failures
        """`Leg.failures` after this step (None: unchanged); likewise `last_word`,
        `nudged`, `reminded`, `truncated` and `invalid`."""
        self.last_word = last_word
        self.nudged = nudged
        self.reminded = reminded
        self.force = force
        """`Leg.force`: the tools and tool choice of the next request (None: unchanged)."""
        self.truncated = truncated
        self.invalid = invalid
        self.forced = forced
        """True: the agent's next requests are not forced to call a tool (`Turn.forced`)."""


def held_back(t: Turn, leg: Leg, text: str, reasoning: tuple[Reasoning, ...] = ()
              ) -> Again | None:
    """Whether an answer is kept from the user, and what follows: `narrated_handoff`
    (asked once more with the transfer tools forced; the text, with the response's
    `reasoning`, stays as what the agent said), `forced_call_skipped` (told to make the
    call, once), `refusal_echo` or `call_text` (not delivered: a step without progress);
    on the last word the agent fails (`no_progress`). None: deliver it."""
    plan = leg.plan
    policy = t.team.policy
    agent = leg.agent
    name = agent.name
    if policy.narrated_handoffs and not leg.nudged and plan.destinations:
        ctx = run_context(t, leg)
        offered = [d for d in plan.destinations if d.tool not in leg.hidden
                   and enabled(plan.routes[d.tool].handoff, ctx)]
        found, tool = narrated(text, offered)
        if found:
            specs = tuple(plan.routes[d.tool].spec for d in offered)
            return Again((_nudge(name, NARRATED_HANDOFF, NARRATED_NOTE),),
                         AssistantMessage(text, name, (), reasoning),
                         stuck(leg) if leg.last_word else None,
                         nudged=True, force=(specs, tool or "required"))
    choice = agent.tool_choice
    if (choice is not None and choice != "auto" and choice != "none" and not leg.reminded
            and agent.reset_tool_choice and not leg.last_word and name not in t.forced):
        # forced until the call is made (views.request: the same test)
        what = "one of your tools" if choice == "required" else f"{choice!r}"
        return Again((_nudge(name, FORCED_CALL, FORCED_NOTE.format(what=what)),),
                     reminded=True)
    if echoes(text, t.refusals) or (
            (leg.failures or leg.last_word or leg.nudged or leg.reminded or t.refusals)
            and quotes(text, _feedback(t, leg), _instructions(leg), leg.last_word)):
        nudge = _nudge(name, REFUSAL_ECHO, ECHO_NOTE)
    elif looks_like_call(text):
        nudge = _nudge(name, CALL_TEXT, CALL_TEXT_NOTE)
    else:
        return None
    if leg.last_word:
        return Again((nudge,), fail=stuck(leg))
    return no_progress(t, leg, (nudge,))


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


def malformed(t: Turn, leg: Leg, detail: str) -> Again:
    """A response the provider refused to return because the model's output was broken:
    feedback, the agent's next request is not forced to call a tool, and a step without
    progress."""
    nudge = _nudge(leg.agent.name, MALFORMED_OUTPUT, MALFORMED_NOTE.format(detail=detail[:200]))
    a = no_progress(t, leg, (nudge,))
    return Again(a.notes, a.said, a.fail, failures=a.failures, last_word=a.last_word,
                 force=a.force, forced=True)


def _nudge(agent: str, code: str, note: str) -> Nudge:
    return Nudge(code, Note(note, agent, to_model=True))


def step_done(t: Turn, leg: Leg, results: list[ToolResult | None]) -> Again | None:
    """After a response's calls (no transfer): a step without progress (every result an
    error) is counted, and past the policy's bound the agent gets its last word, then
    fails with `no_progress`; a step with progress clears the count (None: nothing to
    clear)."""
    if any(r is not None and not r.is_error for r in results):
        return None if not leg.failures else Again(failures=0)
    return no_progress(t, leg)


def no_progress(t: Turn, leg: Leg, notes: tuple[Note | Nudge, ...] = ()) -> Again:
    """A step without progress after `notes`, counted. At the policy's bound the agent
    gets a last word (one request with no tools: answer with what you have); after that,
    or when that answer is not one, it fails with `no_progress`."""
    limit = t.team.policy.max_failed_steps
    failures = leg.failures + 1
    if limit is None or failures < limit:
        return Again(notes, failures=failures)
    if not leg.last_word:
        return Again((*notes, _nudge(leg.agent.name, NO_PROGRESS, LAST_WORD_NOTE)),
                     failures=failures, last_word=True, force=((), None))
    return Again(notes, fail=_stuck(leg.agent.name, failures), failures=failures)


def stuck(leg: Leg) -> Fail:
    """The failure of an agent that made no progress, even with a last word."""
    return _stuck(leg.agent.name, leg.failures)


def _stuck(name: str, failures: int) -> Fail:
    return Fail(NO_PROGRESS, f"{name} made no progress in {failures} steps in a row "
                "(every call refused or failed, then no answer without tools); the turn "
                "stopped trying (HandoffPolicy.max_failed_steps).", name)


def refused(leg: Leg, target: str, code: str) -> tuple[frozenset[str], tuple[str, str]]:
    """A handoff of the leg's agent was refused: the route tools it is still not offered
    (`Leg.hidden`: the second time in a row for the same target and reason, that route
    too) and its latest refusal (`Leg.last_refusal`), for the caller to set."""
    key = (target, code)
    hidden = leg.hidden
    if leg.last_refusal == key:
        route = leg.plan.routes_by_target.get(target)
        if route is not None:
            hidden = hidden | {route.tool_name}
    return hidden, key
