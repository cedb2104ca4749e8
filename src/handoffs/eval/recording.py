"""What each agent's model was sent and answered, counted and kept per played turn.

`Recorder` wraps a `Model`: every request is measured (its size in bytes as the adapter
sends it, the tokens the provider reports, the time) and kept, with the answer, in the list
`recording()` opened for the turn being played. Turns run concurrently; a context variable
says which turn a request belongs to, so requests of different conversations never mix
(the runtime's own tasks inherit it).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..models.base import Model, ModelRequest, ModelResponse, TextDelta, Usage
from ..models.openai import chat_messages  # the neutral wire form; no SDK is imported

log = logging.getLogger("handoffs.eval")

_CALLS: ContextVar[list[ModelCall] | None] = ContextVar("handoffs_eval_calls", default=None)


@dataclass(slots=True)
class ModelCall:
    """One request to an agent's model and what came back: what the agent saw."""

    agent: str
    system: str
    """The system text the agent was given."""
    messages: list[dict[str, Any]]
    """The agent's view of the conversation, as `Message.to_dict()` objects."""
    tools: list[str]
    """The names of the tools offered (handoff tools included)."""
    tool_choice: str | None
    prompt_bytes: int
    """The request's size: the JSON body the adapter sends (`body()`), or, for models
    with no wire form (scripted, rule-based), the same request as an OpenAI Chat
    Completions body, so sizes compare across models."""
    text: str = ""
    """The answer's text."""
    calls: list[dict[str, str]] = field(default_factory=list)
    """The answer's tool calls: `name` and raw `arguments`, in the order made."""
    usage: Usage | None = None
    """Tokens as the provider reported them (None when it did not)."""
    seconds: float = 0.0
    error: str | None = None
    """The exception the model raised (`Type: message`), if it did."""
    model: str | None = None
    """The model that answered, as the provider named it (else as the adapter is
    configured): what a price table prices."""

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "system": self.system, "messages": self.messages,
                "tools": self.tools, "tool_choice": self.tool_choice,
                "prompt_bytes": self.prompt_bytes, "text": self.text, "calls": self.calls,
                "usage": self.usage.to_dict() if self.usage else None,
                "seconds": round(self.seconds, 4), "error": self.error, "model": self.model}


@contextmanager
def recording() -> Iterator[list[ModelCall]]:
    """Collect, in the returned list, every model call made in this context (and in the
    tasks it starts) until the block ends."""
    calls: list[ModelCall] = []
    token = _CALLS.set(calls)
    try:
        yield calls
    finally:
        _CALLS.reset(token)


class Recorder:
    """A `Model` that passes requests to `inner` and records each in the current turn."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner

    def __repr__(self) -> str:
        return f"Recorder({self.inner!r})"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        call = self._start(request)
        started = time.perf_counter()
        try:
            response = await self.inner.complete(request)
        except BaseException as exc:
            self._end(call, None, started, exc)
            raise
        self._end(call, response, started, None)
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        call = self._start(request)
        started = time.perf_counter()
        response: ModelResponse | None = None
        try:
            async for piece in self.inner.stream(request):
                if isinstance(piece, ModelResponse):
                    response = piece
                yield piece
        except BaseException as exc:
            self._end(call, None, started, exc)
            raise
        self._end(call, response, started, None)

    def _start(self, request: ModelRequest) -> ModelCall | None:
        calls = _CALLS.get()
        if calls is None:
            return None
        call = ModelCall(
            agent=request.agent, system=request.system,
            messages=[m.to_dict() for m in request.messages],
            tools=[t.name for t in request.tools], tool_choice=request.tool_choice,
            prompt_bytes=request_bytes(self.inner, request),
            model=getattr(self.inner, "model", None) or None)
        calls.append(call)
        return call

    @staticmethod
    def _end(call: ModelCall | None, response: ModelResponse | None, started: float,
             exc: BaseException | None) -> None:
        if call is None:
            return
        call.seconds = time.perf_counter() - started
        if exc is not None:
            call.error = f"{type(exc).__name__}: {exc}"
        if response is not None:
            call.text = response.text
            call.calls = [{"name": c.name, "arguments": c.arguments}
                          for c in response.tool_calls]
            call.usage = response.usage
            if response.model:
                call.model = response.model


def request_bytes(model: Model, request: ModelRequest) -> int:
    """The size in bytes of `request` as compact UTF-8 JSON in `model`'s wire form."""
    body_of = getattr(model, "body", None)
    body: Any = None
    if callable(body_of):
        try:
            body = body_of(request)
        except Exception:  # not a wire form after all: the neutral one is measured instead
            log.debug("body() of %r failed; measuring the request in the neutral form",
                      model, exc_info=True)
    if body is None:
        body = _neutral_body(request)
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                          default=str).encode())


def _neutral_body(request: ModelRequest) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": chat_messages(request.system, request.messages)}
    if request.tools:
        body["tools"] = [{"type": "function", "function": {
            "name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in request.tools]
    if request.tool_choice is not None:
        body["tool_choice"] = request.tool_choice
    return body
