"""`chat {model}` spans: a traced turn's models, wrapped for the turn.

The runtime has no event for a model call, so a traced turn gets its own view of the
runner's models in which each model is wrapped: the wrapper opens a `chat` span under
the calling agent's activation, and records the duration, the token usage and the finish
reason (spans and the GenAI client metrics). Turns that are not traced use the models
as they are.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import SpanKind, Status, StatusCode

from ..core.messages import AssistantMessage, Message, ToolResult
from ..models.base import Model, ModelRequest, ModelResponse, TextDelta
from . import semconv as sc

if TYPE_CHECKING:
    from .observer import Observer


class TracedModels(dict[str, "Model | None"]):
    """The turn's `models`: each agent's model, wrapped on first use."""

    __slots__ = ("inner", "obs")

    def __init__(self, inner: dict[str, Model | None], obs: Observer) -> None:
        super().__init__()
        self.inner = inner
        self.obs = obs

    def __missing__(self, name: str) -> Model | None:
        model = self.inner[name]  # resolves it, as the runner's own mapping does
        traced = self[name] = TracedModel(model, self.obs) if model is not None else None
        return traced


def names_of(model: Any) -> tuple[str, str | None]:
    """(`gen_ai.provider.name`, `gen_ai.request.model`) as far as the model tells them."""
    provider = getattr(model, "provider", None)
    name = getattr(model, "model", None)
    return (provider if isinstance(provider, str) else type(model).__name__,
            name if isinstance(name, str) else None)


class TracedModel:
    """A model whose every call is a `chat` span and a GenAI client measurement."""

    __slots__ = ("attrs", "inner", "model", "obs", "provider")

    def __init__(self, inner: Model, obs: Observer) -> None:
        self.inner = inner
        self.obs = obs
        self.provider, self.model = names_of(inner)
        self.attrs: dict[str | None, dict[str, Any]] = {}
        """Metric attributes by response model, made once."""

    def _start(self, request: ModelRequest) -> Any:
        attrs: dict[str, Any] = {sc.OPERATION: sc.CHAT, sc.PROVIDER: self.provider,
                                 sc.AGENT_NAME: request.agent}
        if self.model is not None:
            attrs[sc.REQUEST_MODEL] = self.model
        settings = request.settings
        if settings:
            if isinstance(settings.get("temperature"), int | float):
                attrs[sc.REQUEST_TEMPERATURE] = settings["temperature"]
            if isinstance(settings.get("max_tokens"), int):
                attrs[sc.REQUEST_MAX_TOKENS] = settings["max_tokens"]
        obs = self.obs
        if obs.capture:
            attrs[sc.SYSTEM_INSTRUCTIONS] = obs.content(
                [{"type": "text", "content": request.system}])
            attrs[sc.INPUT_MESSAGES] = obs.content(input_messages(request.messages))
        name = f"chat {self.model}" if self.model else "chat"
        return obs.start(name, obs.context(), attrs, SpanKind.CLIENT)

    def _done(self, span: Any, request: ModelRequest, response: ModelResponse,
              t0: float) -> None:
        finish = getattr(response, "finish_reason", None) or (
            "tool_calls" if response.tool_calls else "stop")
        usage = response.usage
        attrs: dict[str, Any] = {sc.FINISH_REASONS: (finish,)}
        if response.model:
            attrs[sc.RESPONSE_MODEL] = response.model
        if usage is not None:
            attrs[sc.INPUT_TOKENS] = usage.input_tokens
            attrs[sc.OUTPUT_TOKENS] = usage.output_tokens
        obs = self.obs
        if obs.capture:
            attrs[sc.OUTPUT_MESSAGES] = obs.content([output_message(response, finish)])
        span.set_attributes(attrs)
        span.end()
        m = obs.metrics
        if m is not None:
            base = self._metric_attrs(response.model)
            m.model_duration.record(time.perf_counter() - t0, base)
            if usage is not None:
                agent = {**base, sc.AGENT_NAME: request.agent}
                m.tokens.record(usage.input_tokens, {**agent, sc.TOKEN_TYPE: "input"})
                m.tokens.record(usage.output_tokens, {**agent, sc.TOKEN_TYPE: "output"})

    def _failed(self, span: Any, exc: BaseException, t0: float) -> None:
        code = getattr(exc, "code", None) or type(exc).__qualname__
        span.set_attribute(sc.ERROR_TYPE, code)
        span.set_status(Status(StatusCode.ERROR, code))
        span.record_exception(exc)
        span.end()
        cur = self.obs.current()
        if cur is not None:
            cur.error = code
        m = self.obs.metrics
        if m is not None:
            m.model_duration.record(time.perf_counter() - t0,
                                    {**self._metric_attrs(None), sc.ERROR_TYPE: code})

    def _metric_attrs(self, response_model: str | None) -> dict[str, Any]:
        attrs = self.attrs.get(response_model)
        if attrs is None:
            attrs = {sc.OPERATION: sc.CHAT, sc.PROVIDER: self.provider}
            if self.model is not None:
                attrs[sc.REQUEST_MODEL] = self.model
            if response_model:
                attrs[sc.RESPONSE_MODEL] = response_model
            self.attrs[response_model] = attrs
        return attrs

    async def complete(self, request: ModelRequest) -> ModelResponse:
        span = self._start(request)
        t0 = time.perf_counter()
        try:
            response = await self.inner.complete(request)
        except BaseException as exc:
            self._failed(span, exc, t0)
            raise
        self._done(span, request, response, t0)
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        span = self._start(request)
        t0 = time.perf_counter()
        done = False
        try:
            async for piece in self.inner.stream(request):
                if isinstance(piece, ModelResponse) and not done:
                    done = True
                    self._done(span, request, piece, t0)
                yield piece
        except BaseException as exc:
            if not done:
                self._failed(span, exc, t0)
            raise
        if not done:  # a stream that ended without a response (the loop fails the agent)
            self._failed(span, RuntimeError("The stream ended without a response."), t0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def input_messages(messages: Any) -> list[dict[str, Any]]:
    """A view of the transcript in the GenAI conventions' input-message form."""
    out: list[dict[str, Any]] = []
    for m in messages:
        out.append(_message(m))
    return out


def _message(m: Message) -> dict[str, Any]:
    if isinstance(m, AssistantMessage):
        parts: list[dict[str, Any]] = []
        if m.text:
            parts.append({"type": "text", "content": m.text})
        for c in m.tool_calls:
            parts.append({"type": "tool_call", "id": c.id, "name": c.name,
                          "arguments": _arguments(c.arguments)})
        return {"role": "assistant", "parts": parts}
    if isinstance(m, ToolResult):
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": m.call_id,
                                           "result": m.text}]}
    return {"role": "user", "parts": [{"type": "text", "content": m.text}]}


def output_message(response: ModelResponse, finish: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if response.text:
        parts.append({"type": "text", "content": response.text})
    for c in response.tool_calls:
        parts.append({"type": "tool_call", "id": c.id, "name": c.name,
                      "arguments": _arguments(c.arguments)})
    return {"role": "assistant", "parts": parts, "finish_reason": finish}


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
