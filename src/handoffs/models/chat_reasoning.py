"""The reasoning state OpenAI-compatible servers put on Chat Completions responses, kept
and sent back to the model that wrote it.

Two shapes, neither part of OpenAI's own API (which keeps its reasoning hidden):

- `reasoning_content` (DeepSeek, Kimi, Qwen, vLLM; `reasoning` on newer vLLM, Ollama and
  OpenRouter) beside `content`: the model's reasoning as text. DeepSeek's thinking mode
  refuses a history whose assistant tool-call messages lack theirs ("The
  reasoning_content in the thinking mode must be passed back to the API").
- `extra_content: {"google": {"thought_signature": ...}}` on a tool call, from Gemini's
  OpenAI-compatible endpoint: Gemini 3 refuses the next request if a call of the current
  turn comes back without it ("Function call is missing a thought_signature").

Both are kept on the transcript's assistant message (`Reasoning`, origin `openai-chat`,
with the model's name) and sent back, under the key they came with, only in requests to
the same model; every other model, and every other provider, never sees them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.messages import Reasoning
from .replay import own_reasoning

ORIGIN = "openai-chat"
"""`Reasoning.origin` of what Chat Completions servers return."""
TEXT_KEYS = ("reasoning_content", "reasoning")
"""The message fields that carry reasoning as text, in the order they are looked for."""


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:  # an SDK model keeps fields it does not declare aside
        extra = getattr(obj, "model_extra", None)
        if isinstance(extra, Mapping):
            value = extra.get(name)
    return value


def said_reasoning(message: Any, model: str) -> Reasoning | None:
    """The reasoning text of a response message, kept with the key it came under."""
    for key in TEXT_KEYS:
        text = _field(message, key)
        if isinstance(text, str) and text:
            return Reasoning(ORIGIN, "reasoning_content", {key: text}, model)
    return None


def extra_content(call: Any) -> dict[str, Any] | None:
    """A tool call's `extra_content` (Gemini's thought signature), when it has one."""
    value = _field(call, "extra_content")
    return dict(value) if isinstance(value, Mapping) and value else None


def signature_of(extra: Mapping[str, Any], call_id: str, model: str) -> Reasoning:
    """A call's `extra_content` as the transcript keeps it."""
    return Reasoning(ORIGIN, "thought_signature", {"extra_content": dict(extra)}, model,
                     call_id)


def call_reasoning(call: Any, call_id: str, model: str) -> Reasoning | None:
    """The thought signature of a response's tool call, or None."""
    extra = extra_content(call)
    return None if extra is None else signature_of(extra, call_id, model)


class ThoughtParts:
    """A streamed response's reasoning text, gathered from its deltas."""

    __slots__ = ("key", "parts")

    def __init__(self) -> None:
        self.key: str | None = None
        self.parts: list[str] = []

    def add(self, delta: Any) -> None:
        for key in TEXT_KEYS:
            piece = _field(delta, key)
            if isinstance(piece, str) and piece:
                self.key = self.key or key
                self.parts.append(piece)
                return

    def reasoning(self, model: str) -> list[Reasoning]:
        """The gathered reasoning (a list the caller may add signatures to)."""
        if self.key is None:
            return []
        return [Reasoning(ORIGIN, "reasoning_content", {self.key: "".join(self.parts)},
                          model)]


def mine(reasoning: Sequence[Reasoning], model: str) -> tuple[Reasoning, ...]:
    """The parts a request to `model` may carry: this family's, made by that model."""
    return own_reasoning(reasoning, ORIGIN, model)


def said_back(message: dict[str, Any], own: Iterable[Reasoning]) -> None:
    """Put the reasoning text back on an assistant message, under its own key."""
    for r in own:
        if r.kind == "reasoning_content":
            message.update(r.data)


def signed_back(own: Iterable[Reasoning], call_id: str) -> dict[str, Any]:
    """The fields a tool call of an assistant message gets back (its `extra_content`)."""
    for r in own:
        if r.kind == "thought_signature" and r.call_id == call_id:
            return dict(r.data)
    return {}
