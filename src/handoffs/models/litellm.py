"""`LiteLLMModel`: any model LiteLLM reaches, through its `acompletion`.

    Runner(team, model="litellm:mistral/mistral-large-latest")   # MISTRAL_API_KEY
    Runner(team, model="litellm:deepseek/deepseek-reasoner")     # DEEPSEEK_API_KEY
    Runner(team, model="litellm:openai/my-model?api_base=http://localhost:8000/v1")

The catch-all for providers without an adapter of their own: LiteLLM speaks each one's
API and answers in Chat Completions' shape. Tool calls (streamed fragments joined),
streaming, usage with cached and reasoning tokens, errors mapped to the library's codes.
A reasoning model's `reasoning_content` (DeepSeek, vLLM, ...) and `thinking_blocks`
(Claude, with signatures) are kept on the transcript (`Reasoning(origin="litellm")`) and
sent back on the assistant message they came with, only to the same model.

`pip install 'handoffs[litellm]'`; imported only when a model is created. LiteLLM's own
retries are off; `RetryPolicy` retries instead. Importing LiteLLM fetches a price list
from the internet unless LITELLM_LOCAL_MODEL_COST_MAP is set: this adapter sets it (to
use the copy LiteLLM ships) when it is not set already.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..core.messages import Message, Reasoning, ToolCall
from ..errors import ModelError
from .base import ModelRequest, ModelResponse, TextDelta, Usage
from .failures import status_error, to_model_error
from .openai import MAX_DESCRIPTION_LENGTH, chat_messages
from .replay import Exchange, own_reasoning, provider_items
from .retry import RetryPolicy
from .sdk import SDKModel, import_sdk
from .tool_choice import resolve_tool_choice

ORIGIN = "litellm"
"""The `Reasoning.origin` of this adapter's parts."""
_STOP = {"stop": "end", "length": "length", "tool_calls": "tool_calls",
         "function_call": "tool_calls", "content_filter": "content_filter"}
_OPTIONAL = ("tool_choice", "parallel_tool_calls", "response_format")
"""Request fields some providers lack: sent only where LiteLLM says the model takes them
(LiteLLM refuses a request with a field its provider does not support)."""


class LiteLLMModel(SDKModel):
    """A `Model` on `litellm.acompletion`, for `<provider>/<model>` names LiteLLM knows."""

    provider = "litellm"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        api_base: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        """`model` is LiteLLM's model name, `<provider>/<model>` (`mistral/...`,
        `deepseek/...`, `groq/...`, `bedrock/...`, `vertex_ai/...`, `openrouter/...`).

        `api_key`, `api_base`: None lets LiteLLM read its provider's environment variables
        (MISTRAL_API_KEY, DEEPSEEK_API_KEY, ...). `timeout`: seconds for a call.
        `max_retries`, `retry`: see `RetryPolicy`. `settings`: `acompletion` arguments
        sent every time (`temperature`, `max_tokens`, `reasoning_effort`,
        `drop_params`, a provider's own such as `vertex_project`); a request's own
        settings override them.
        """
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        self._litellm = import_sdk("litellm", "LiteLLM", "litellm")
        self.api_key = api_key
        self.api_base = api_base
        super().__init__(model, client=self._litellm, timeout=timeout,
                         max_retries=max_retries, retry=retry, settings=settings,
                         make_client=lambda: self._litellm)

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.model!r})"

    def _classify(self, exc: BaseException) -> ModelError | None:
        return litellm_error(exc) or to_model_error(exc, self.provider)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """`acompletion`'s request arguments for `request` (credentials apart)."""
        body: dict[str, Any] = {"model": self.model, "messages": litellm_messages(
            request.system, request.messages, self.model)}
        if request.tools:
            body["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description[:MAX_DESCRIPTION_LENGTH],
                "parameters": t.parameters}} for t in request.tools]
        choice = resolve_tool_choice(request.tool_choice, request.tools)
        if choice is not None:
            kind, name = choice
            body["tool_choice"] = (kind if name is None
                                   else {"type": "function", "function": {"name": name}})
        if request.parallel_tool_calls is not None and request.tools:
            body["parallel_tool_calls"] = request.parallel_tool_calls
        output = request.output
        if output is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": output.name, "schema": output.schema, "strict": output.strict}}
        supported = self._supported()
        if supported is not None:
            for key in _OPTIONAL:
                if key in body and key not in supported:
                    del body[key]
        body.update(self.settings)
        body.update(request.settings)
        return body

    def _supported(self) -> set[str] | None:
        try:
            found = self._litellm.get_supported_openai_params(model=self.model)
        except Exception:  # a model LiteLLM cannot place: let the request say what is wrong
            return None
        return set(found) if found else None

    def _stream_body(self, body: dict[str, Any]) -> dict[str, Any]:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        return body

    async def _create(self, body: dict[str, Any]) -> Any:
        return await self._litellm.acompletion(**body, **self._call_options())

    def _call_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"timeout": self.timeout, "num_retries": 0,
                                   "max_retries": 0}
        if self.api_key is not None:
            options["api_key"] = self.api_key
        if self.api_base is not None:
            options["api_base"] = self.api_base
        return options

    def _response(self, raw: Any) -> ModelResponse:
        choices = getattr(raw, "choices", None) or []
        if not choices:
            raise ModelError("litellm returned no choices.", "model_error")
        message = choices[0].message
        calls = tuple(ToolCall(tc.id or _new_call_id(), tc.function.name or "",
                               tc.function.arguments or "")
                      for tc in getattr(message, "tool_calls", None) or ())
        reasoning = _reasoning(getattr(message, "reasoning_content", None),
                               getattr(message, "thinking_blocks", None), self.model)
        finish = choices[0].finish_reason
        stop = "tool_calls" if calls else _STOP.get(finish or "stop", "end")
        return ModelResponse(message.content or "", calls, _usage(getattr(raw, "usage", None)),
                             getattr(raw, "model", None) or self.model, reasoning, stop)

    async def _stream_once(self, body: dict[str, Any]
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        stream = await self._litellm.acompletion(**body, **self._call_options())
        texts: list[str] = []
        thoughts: list[str] = []
        blocks: list[dict[str, Any]] = []
        calls: dict[int, list[Any]] = {}  # index -> [id, name, argument fragments]
        usage: Usage | None = None
        finish: str | None = None
        async for chunk in stream:
            if getattr(chunk, "usage", None) is not None:
                usage = _usage(chunk.usage)
            for choice in getattr(chunk, "choices", None) or ():
                finish = choice.finish_reason or finish
                delta = choice.delta
                if delta is None:
                    continue
                if getattr(delta, "reasoning_content", None):
                    thoughts.append(delta.reasoning_content)
                blocks.extend(getattr(delta, "thinking_blocks", None) or ())
                if delta.content:
                    texts.append(delta.content)
                    yield TextDelta(delta.content)
                for tc in delta.tool_calls or ():
                    index = tc.index if tc.index is not None else len(calls)
                    entry = calls.setdefault(index, [None, "", []])
                    entry[0] = entry[0] or tc.id
                    fn = tc.function
                    if fn is not None:
                        entry[1] = entry[1] or fn.name or ""
                        if fn.arguments:
                            entry[2].append(fn.arguments)
        made = tuple(ToolCall(cid or _new_call_id(), name, "".join(parts))
                     for _, (cid, name, parts) in sorted(calls.items()))
        stop = "tool_calls" if made else _STOP.get(finish or "stop", "end")
        yield ModelResponse("".join(texts), made, usage or Usage(0, 0, 1), self.model,
                            _reasoning("".join(thoughts), _merged(blocks), self.model), stop)


def litellm_messages(system: str, messages: Sequence[Message], model: str
                     ) -> list[dict[str, Any]]:
    """A neutral view as Chat Completions messages (`chat_messages`), each assistant
    message with the `reasoning_content` / `thinking_blocks` `model` gave with it."""
    out = chat_messages(system, messages)
    exchanges = [item for item in provider_items(messages) if isinstance(item, Exchange)]
    assistants = [m for m in out if m["role"] == "assistant"]
    for message, exchange in zip(assistants, exchanges, strict=True):
        for part in own_reasoning(exchange.reasoning, ORIGIN, model):
            message.update(part.data)
    return out


def _reasoning(content: str | None, blocks: Sequence[Any] | None, model: str
               ) -> tuple[Reasoning, ...]:
    parts: list[Reasoning] = []
    if blocks:
        plain = [dict(b) if isinstance(b, Mapping) else b.model_dump() for b in blocks]
        parts.append(Reasoning(ORIGIN, "thinking_blocks", {"thinking_blocks": plain}, model))
    if content:
        parts.append(Reasoning(ORIGIN, "reasoning_content", {"reasoning_content": content},
                               model))
    return tuple(parts)


def _merged(blocks: list[Any]) -> list[dict[str, Any]]:
    """Streamed thinking-block pieces joined into whole blocks (a signature closes one)."""
    whole: list[dict[str, Any]] = []
    for piece in blocks:
        piece = dict(piece) if isinstance(piece, Mapping) else piece.model_dump()
        if whole and whole[-1].get("type") == piece.get("type") == "thinking" and \
                not whole[-1].get("signature"):
            last = whole[-1]
            last["thinking"] = (last.get("thinking") or "") + (piece.get("thinking") or "")
            if piece.get("signature"):
                last["signature"] = piece["signature"]
        else:
            whole.append(piece)
    return whole


def litellm_error(exc: BaseException) -> ModelError | None:
    """LiteLLM's own verdicts that the status alone does not carry: a context window
    exceeded (a 400 by status), a provider it could not reach."""
    if not type(exc).__module__.startswith("litellm"):
        return None
    names = {c.__name__ for c in type(exc).__mro__}
    if "ContextWindowExceededError" in names:
        return ModelError(f"litellm (the conversation is too long for the model): {exc}",
                          "context_length_exceeded", status=400)
    status = getattr(exc, "status_code", None)
    if "Timeout" in names or "APITimeoutError" in names:
        return ModelError(f"litellm did not answer in time: {exc}", "timeout", retryable=True)
    if isinstance(status, int) and "APIConnectionError" not in names:
        response = getattr(exc, "response", None)
        raw = getattr(response, "headers", None) or {}
        headers = {str(k).lower(): str(v) for k, v in raw.items()}
        return status_error("litellm", status, {"message": str(exc)}, headers, str(exc))
    return None


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage(0, 0, 1)
    details = getattr(raw, "prompt_tokens_details", None)
    out_details = getattr(raw, "completion_tokens_details", None)
    return Usage(int(getattr(raw, "prompt_tokens", 0) or 0),
                 int(getattr(raw, "completion_tokens", 0) or 0), 1,
                 cache_read_tokens=int(getattr(details, "cached_tokens", 0) or 0),
                 cache_write_tokens=int(getattr(raw, "cache_creation_input_tokens", 0) or 0),
                 reasoning_tokens=int(getattr(out_details, "reasoning_tokens", 0) or 0))


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def litellm_model(name: str, **options: Any) -> LiteLLMModel:
    """`get_model("litellm:<provider>/<model>")`."""
    return LiteLLMModel(name, **options)
