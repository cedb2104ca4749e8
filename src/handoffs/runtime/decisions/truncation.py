"""A response cut short by the output limit (`ModelResponse.stop == "length"`: OpenAI's
`finish_reason: "length"`, Anthropic's `stop_reason: "max_tokens"`), as decisions.

Truncation is never silent. Every cut response emits `answer_truncated` (agent, the
output tokens it reached, whether the text went to the user). A cut answer in words is
not delivered by default: the agent is told so and asked once more for a shorter answer,
and a second cut answer in the same activation fails it with `output_truncated`, a code
the team's fallback, the run's result and `eval` see (`Agent(accept_truncated=True)`
delivers the cut text instead). A cut response with tool calls never runs its last call,
the one being written when the limit struck (its arguments are half a JSON object, or
whatever the provider made of them): that call's result says so, and the others run.
"""

from __future__ import annotations

from ...core.messages import Note, ToolCall, ToolResult
from ...models.base import ModelResponse
from ..state import Fail, Leg
from .converge import Again

LENGTH = "length"
"""`ModelResponse.stop` of a response the output limit cut."""
OUTPUT_TRUNCATED = "output_truncated"
"""The code of an agent whose answers the output limit cut twice in a row."""

TRUNCATED_NOTE = ("Your last answer was cut off by the output limit{limit} before it was "
                  "complete, so it was not sent. Answer again, more briefly.")
CUT_CALL = ("This call was cut off by the output limit{limit} before its arguments were "
            "complete, so it was not run. Make it again with shorter arguments, or answer.")


class Cut:
    """A cut answer in words, as decided: the output tokens it reached (`limit`, None:
    not known), for its `answer_truncated` event, and what follows (`again`: its
    feedback, or its failure; None: it is delivered). A plain slotted class, as
    `converge.Again`."""

    __slots__ = ("again", "limit")

    def __init__(self, limit: int | None, again: Again | None = None) -> None:
        self.limit = limit
        self.again = again


class CutCall:
    """A cut response with calls, as decided: the output tokens it reached (`limit`),
    and its last call's index and result (an error the model reads: it is not run)."""

    __slots__ = ("index", "limit", "result")

    def __init__(self, limit: int | None, index: int, result: ToolResult) -> None:
        self.limit = limit
        self.index = index
        self.result = result


def _limit(response: ModelResponse) -> int | None:
    usage = response.usage
    return usage.output_tokens if usage is not None and usage.output_tokens else None


def _said(limit: int | None) -> str:
    return f" ({limit} tokens)" if limit else ""


def cut_answer(leg: Leg, response: ModelResponse) -> Cut:
    """A cut answer in words: delivered (`Agent(accept_truncated=True)`, `again` None),
    or the agent is asked again (a note says why), or, cut before in this activation, it
    fails with `output_truncated`."""
    agent = leg.agent
    name = agent.name
    limit = _limit(response)
    if agent.accept_truncated:
        return Cut(limit)
    truncated = leg.truncated + 1
    if truncated >= 2:
        return Cut(limit, Again(fail=Fail(
            OUTPUT_TRUNCATED,
            f"{name}'s answer was cut off by the output limit{_said(limit)} twice in "
            "a row; raise the limit (max_tokens) or ask for shorter answers "
            "(Agent(accept_truncated=True) delivers cut answers).", name),
            truncated=truncated))
    return Cut(limit, Again((Note(TRUNCATED_NOTE.format(limit=_said(limit)), name,
                                  to_model=True),), truncated=truncated))


def cut_call(leg: Leg, response: ModelResponse) -> CutCall | None:
    """In a cut response with calls: the call that is not run and its result (an error
    the model reads); None when the response was not cut."""
    if response.stop != LENGTH or not response.tool_calls:
        return None
    name = leg.agent.name
    limit = _limit(response)
    index = len(response.tool_calls) - 1
    c: ToolCall = response.tool_calls[index]
    text = CUT_CALL.format(limit=_said(limit))
    return CutCall(limit, index, ToolResult(c.id, c.name, text, name, is_error=True))
