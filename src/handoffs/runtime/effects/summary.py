"""Summaries for `history="summary"` handoffs (made once per handoff, kept on the record)
and session transfers: a model call with the summariser's prompt, an effect."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...core.messages import AssistantMessage, Message, Note, ToolResult, UserMessage
from ...errors import HandoffsError
from ...models.base import Model, ModelRequest

if TYPE_CHECKING:
    from ..state.host import Executor

DEFAULT_PROMPT = (
    "Summarise the conversation below for {target}, who takes it over from {source}. "
    "Keep every fact, number, name and open question the next agent needs; drop "
    "pleasantries. Answer with the summary only."
)


@dataclass(slots=True, frozen=True)
class Summarizer:
    """The model and prompt that write handoff summaries (set on a Team or a Handoff)."""

    model: Any = None
    """A `Model`, a "provider:name" string, or None for the source agent's model."""
    prompt: str = DEFAULT_PROMPT
    """The system text; `{source}` and `{target}` are filled in."""
    max_chars: int = 4000
    """Longer summaries are cut to this many characters."""


def transcript_text(messages: Sequence[Message]) -> str:
    """The conversation as plain lines, for a summariser's user message."""
    lines: list[str] = []
    for m in messages:
        if isinstance(m, UserMessage):
            lines.append(f"user: {m.text}")
        elif isinstance(m, AssistantMessage):
            if m.text:
                lines.append(f"{m.agent}: {m.text}")
            for c in m.tool_calls:
                lines.append(f"{m.agent} called {c.name}({c.arguments})")
        elif isinstance(m, ToolResult):
            lines.append(f"{m.name} returned: {m.text}")
        elif isinstance(m, Note) and m.to_model:
            lines.append(f"note: {m.text}")
    return "\n".join(lines)


def summary_model(summarizer: Summarizer | None, fallback_model: Model | None) -> Model:
    """The model that writes a summary: the summariser's (a `Model` or a "provider:name"
    string), else `fallback_model`; `no_model` when there is neither."""
    s = summarizer or Summarizer()
    model: Any = s.model if s.model is not None else fallback_model
    if isinstance(model, str):
        from ...models.registry import get_model

        model = get_model(model)
    if model is None:
        raise HandoffsError("A summary handoff needs a summarizer model; set "
                            "Team(summarizer=Summarizer(model=...)).", code="no_model")
    return model  # type: ignore[no-any-return]


async def summarize(
    executor: Executor,
    t: Any,
    summarizer: Summarizer | None,
    fallback_model: Model | None,
    messages: Sequence[Message],
    source: str,
    target: str,
) -> str:
    """Ask the summariser's model for a summary of `messages`, through `executor` (an
    effect like any model call: an activity under Temporal). `t` is the turn it belongs
    to (None for a session transfer)."""
    s = summarizer or Summarizer()
    request = ModelRequest(
        f"{source}:summarizer",
        s.prompt.format(source=source, target=target),
        [UserMessage(transcript_text(messages) or "(no messages yet)", source)],
        (),
    )
    response = await executor.summary(t, summarizer, fallback_model, request, target)
    text: str = response.text
    return text.strip()[: s.max_chars]
