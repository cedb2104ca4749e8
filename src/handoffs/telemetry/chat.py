"""`chat {model}` spans: a traced turn's models, wrapped for the turn.

The runtime has no event for a model call, so a traced turn gets its own view of the
runner's models in which each model is wrapped: the wrapper opens a `chat` span under
the calling agent's activation, makes it the current span while the model works (an
instrumented HTTP client's spans nest under it), and records the duration, the token
usage and the finish reason (spans and the GenAI client metrics). Turns that are not
traced use the models as they are.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry.context import attach, detach
from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

from ..core.messages import AssistantMessage, Message, ToolResult
from ..models.base import Model, ModelRequest, ModelResponse, TextDelta
from . import semconv as sc

if TYPE_CHECKING:
    from .observing import Observing


class TracedModels(dict[str, "Model | None"]):
    """The turn's `models`: each agent's model, wrapped on first use."""

    __slots__ = ("inner", "obs")

    def __init__(self, inner: dict[str, Model | None], obs: Observing) -> None:
        super().__init__()
        self.inner = inner
        self.obs = obs

    def __missing__(self, name: str) -> Model | None:
        model = self.inner[name]  # resolves it, as the runner's own mapping does
        traced = self[name] = TracedModel(model, self.obs) if model is not None else None
        return traced


def names_of(model: Any) -> tuple[str | None, str | None]:
    """(`gen_ai.provider.name`, `gen_ai.request.model`) as far as the model tells them
    (None: it does not say, as the offline models)."""
    provider = getattr(model, "provider", None)
    name = getattr(model, "model", None)
    return (provider if isinstance(provider, str) and provider else None,
            name if isinstance(name, str) and name else None)


DEFAULT_HOSTS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
"""Where an adapter with no `base_url` sends its requests: its provider's own API."""


def server_of(model: Any, provider: str | None) -> dict[str, Any]:
    """`server.address` and `server.port` of the model's API, when it has one."""
    url = getattr(model, "base_url", None)
    if not isinstance(url, str) or not url:
        url = DEFAULT_HOSTS.get(provider or "")
        if url is None:
            return {}
    try:
        parts = urlsplit(url if "//" in url else f"//{url}")
        host, port = parts.hostname, parts.port
    except ValueError:
        return {}
    if not host:
        return {}
    if port is None:
        port = 80 if parts.scheme == "http" else 443
    return {sc.SERVER_ADDRESS: host, sc.SERVER_PORT: port}


class ModelInfo:
    """What a model says about itself, worked out once per model object."""

    __slots__ = ("agent_attrs", "metrics", "model", "provider", "span_attrs")

    def __init__(self, model: Any) -> None:
        self.provider, self.model = names_of(model)
        named: dict[str, Any] = {}
        if self.provider is not None:
            named[sc.PROVIDER] = self.provider
        if self.model is not None:
            named[sc.REQUEST_MODEL] = self.model
        self.agent_attrs = named
        """What an `invoke_agent` span of an agent on this model says about it."""
        self.span_attrs = {sc.OPERATION: sc.CHAT, **named, **server_of(model, self.provider)}
        """The attributes every `chat` span of this model starts with."""
        self.metrics: dict[str | None, dict[str, Any]] = {}
        """Metric attributes by response model, made once."""

    def metric_attrs(self, response_model: str | None) -> dict[str, Any]:
        attrs = self.metrics.get(response_model)
        if attrs is None:
            attrs = {sc.OPERATION: sc.CHAT, **self.agent_attrs}
            if response_model:
                attrs[sc.RESPONSE_MODEL] = response_model
            self.metrics[response_model] = attrs
        return attrs


_INFO: dict[int, tuple[Any, ModelInfo]] = {}
"""`ModelInfo` by model object (kept with it, so its id is not reused while cached)."""


def info_of(model: Any) -> ModelInfo:
    found = _INFO.get(id(model))
    if found is not None and found[0] is model:
        return found[1]
    if len(_INFO) >= 256:  # models made per request: forget the old ones
        _INFO.clear()
    info = ModelInfo(model)
    _INFO[id(model)] = (model, info)
    return info


class TracedModel:
    """A model whose every call is a `chat` span, current while the model is called (so
    the provider SDK's HTTP spans nest under it), and a GenAI client measurement."""

    __slots__ = ("info", "inner", "obs")

    def __init__(self, inner: Model, obs: Observing) -> None:
        self.inner = inner
        self.obs = obs
        self.info = info_of(inner)

    def _start(self, request: ModelRequest) -> Any:
        info = self.info
        attrs = info.span_attrs.copy()
        attrs[sc.AGENT_NAME] = request.agent
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
        f = obs.current()
        if f is not None and f.model is not info:
            f.model = info
            if f.span is not None and info.agent_attrs:
                f.span.set_attributes(info.agent_attrs)
        model = info.model
        return obs.start(f"chat {model}" if model else "chat",
                         f.ctx if f is not None else obs.root_ctx, attrs, SpanKind.CLIENT)

    def _done(self, span: Any, request: ModelRequest, response: ModelResponse,
              t0: float) -> None:
        finish = getattr(response, "finish_reason", None) or (
            "tool_calls" if response.tool_calls else "stop")
        usage = response.usage
        if usage is not None and not (usage.input_tokens or usage.output_tokens):
            usage = None  # an offline model, or a stream that did not say: unknown
        attrs: dict[str, Any] = {sc.FINISH_REASONS: (finish,)}
        if response.model:
            attrs[sc.RESPONSE_MODEL] = response.model
        obs = self.obs
        if usage is not None:
            attrs[sc.INPUT_TOKENS] = usage.input_tokens
            attrs[sc.OUTPUT_TOKENS] = usage.output_tokens
            f = obs.current()
            if f is not None:
                f.input_tokens += usage.input_tokens
                f.output_tokens += usage.output_tokens
        if obs.capture:
            attrs[sc.OUTPUT_MESSAGES] = obs.content([output_message(response, finish)])
        span.set_attributes(attrs)
        span.end()
        m = obs.metrics
        if m is not None:
            base = self.info.metric_attrs(response.model)
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
                                    {**self.info.metric_attrs(None), sc.ERROR_TYPE: code})

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await self.around(request, self.inner.complete)

    async def around(self, request: ModelRequest,
                     call: Callable[[ModelRequest], Awaitable[ModelResponse]]
                     ) -> ModelResponse:
        """`call(request)` (the model's call, or an executor's that performs it
        elsewhere, as a Temporal activity) as this model's `chat` span."""
        span = self._start(request)
        t0 = time.perf_counter()
        token = attach(set_span_in_context(span))
        try:
            response = await call(request)
        except BaseException as exc:
            self._failed(span, exc, t0)
            raise
        finally:
            detach(token)
        self._done(span, request, response, t0)
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        span = self._start(request)
        t0 = time.perf_counter()
        ctx = set_span_in_context(span)
        pieces = self.inner.stream(request).__aiter__()
        done = False
        try:
            while True:
                # Current only while the model works: not while the reader has the piece.
                token = attach(ctx)
                try:
                    piece = await pieces.__anext__()
                except StopAsyncIteration:
                    break
                finally:
                    detach(token)
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
                                           "response": m.text}]}
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
