"""`ResponsesModel`: OpenAI's Responses API, stateless.

    Runner(team, model="openai-responses:gpt-5-mini")    # OPENAI_API_KEY

Every request carries the whole history and `store: false`: no conversation lives on
OpenAI's side and `previous_response_id` is never sent, so a handoff, a retry or a
replayed turn always sends exactly what the transcript holds. Reasoning models' encrypted
reasoning items are asked for (`include: ["reasoning.encrypted_content"]`), kept on the
transcript's assistant message (`Reasoning(origin="openai-responses")`) and sent back
with the calls they led to, only to the same model.

Built on the official `openai` SDK (`pip install 'handoffs[openai]'`), imported only when
a model is created. The SDK's own retries are off; `RetryPolicy` retries instead.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..core.messages import Message, Reasoning, ToolCall
from ..core.names import tool_name
from ..errors import ModelError
from .base import ModelRequest, ModelResponse, TextDelta, TokenLogprobs, Usage
from .failures import status_error
from .openai import MAX_DESCRIPTION_LENGTH, MAX_ID_LENGTH, arguments_text
from .replay import CONTINUE, CallIds, Exchange, own_reasoning, provider_items
from .retry import RetryPolicy
from .sdk import SDKModel, import_sdk
from .strict import strict_compatible
from .tool_choice import resolve_tool_choice

ORIGIN = "openai-responses"
"""The `Reasoning.origin` of this adapter's parts."""
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5", "codex")
"""Model names that reason: their encrypted reasoning is asked for by default."""
_INCOMPLETE_STOP = {"max_output_tokens": "length", "content_filter": "content_filter"}
_ERROR_STATUS = {
    "rate_limit_exceeded": 429, "insufficient_quota": 429, "server_error": 500,
    "invalid_api_key": 401, "context_length_exceeded": 400, "invalid_prompt": 400,
}
"""The HTTP status an error code reported inside a response or stream stands for."""


class ResponsesModel(SDKModel):
    """A `Model` on OpenAI's Responses API (`client.responses.create`), stateless.

    Function tools (strict where the schema allows), tool choice, structured output
    (`text.format`), streaming, usage with cached and reasoning tokens, and encrypted
    reasoning items carried in the transcript.
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: Any = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        settings: Mapping[str, Any] | None = None,
        reasoning_items: bool | None = None,
    ) -> None:
        """`model` is OpenAI's model name.

        `api_key`: None reads OPENAI_API_KEY (a server at `base_url` that needs no key gets
        a placeholder). `base_url`: None reads OPENAI_BASE_URL, else OpenAI's (an Azure
        OpenAI `.../openai/v1/` URL speaks the same API, as do vLLM and Ollama). `client`: an
        `openai.AsyncOpenAI` to use as it is. `timeout`, `max_retries`, `retry`: as
        `OpenAIModel`. `settings`: request fields sent every time (`reasoning`,
        `max_output_tokens`, `temperature`, ...); a request's own settings override them.
        `reasoning_items`: ask for encrypted reasoning items and send them back; None: for
        reasoning models (names starting o1, o3, o4, gpt-5, codex), which alone make them.
        """
        self._sdk = import_sdk("openai", "OpenAI Responses", "openai")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        self._api_key = key or ("unused" if self.base_url else None)
        self.reasoning_items = (model.startswith(REASONING_PREFIXES)
                                if reasoning_items is None else reasoning_items)
        """Whether encrypted reasoning is asked for (`include`) and sent back."""
        super().__init__(model, client=client, timeout=timeout, max_retries=max_retries,
                         retry=retry, settings=settings,
                         make_client=lambda: self._sdk.AsyncOpenAI(
                             api_key=self._api_key, base_url=self.base_url,
                             timeout=self.timeout, max_retries=0))

    def __repr__(self) -> str:
        return f"ResponsesModel({self.model!r})"

    def _check_credentials(self) -> None:
        if not self._api_key:
            raise ModelError("No OpenAI API key: set OPENAI_API_KEY or pass "
                             "ResponsesModel(api_key=...).", "auth_error")

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The Responses API request body for `request` (without `stream`)."""
        body: dict[str, Any] = {
            "model": self.model, "store": False,
            "input": responses_input(request.messages,
                                     self.model if self.reasoning_items else None)}
        if self.reasoning_items:
            body["include"] = ["reasoning.encrypted_content"]
        if request.logprobs:
            body["include"] = [*body.get("include", ()), "message.output_text.logprobs"]
            body["top_logprobs"] = request.logprobs
        if request.system:
            body["instructions"] = request.system
        if request.tools:
            # `strict` is always said: the Responses API takes a missing one as true.
            body["tools"] = [{"type": "function", "name": t.name,
                              "description": t.description[:MAX_DESCRIPTION_LENGTH],
                              "parameters": t.parameters,
                              "strict": strict_compatible(t.parameters)}
                             for t in request.tools]
        choice = resolve_tool_choice(request.tool_choice, request.tools)
        if choice is not None:
            kind, name = choice
            body["tool_choice"] = kind if name is None else {"type": "function", "name": name}
        if request.parallel_tool_calls is not None and request.tools:
            body["parallel_tool_calls"] = request.parallel_tool_calls
        output = request.output
        if output is not None:
            body["text"] = {"format": {"type": "json_schema", "name": output.name,
                                       "schema": output.schema, "strict": output.strict}}
        body.update(self.settings)
        body.update(request.settings)
        body.pop("previous_response_id", None)  # stateless, whatever the settings say
        body["store"] = False
        return body

    async def _create(self, body: dict[str, Any]) -> Any:
        return await self._client().responses.create(**body)

    def _response(self, raw: Any) -> ModelResponse:
        status = getattr(raw, "status", None)
        if status == "failed":
            raise reported_error(_plain(getattr(raw, "error", None)), self.provider)
        texts: list[str] = []
        calls: list[ToolCall] = []
        reasoning: list[Reasoning] = []
        refused = False
        tokens: list[TokenLogprobs] = []
        for item in getattr(raw, "output", None) or ():
            kind = getattr(item, "type", None)
            if kind == "message":
                for part in getattr(item, "content", None) or ():
                    if part.type == "output_text":
                        texts.append(part.text)
                        tokens.extend(TokenLogprobs(t.token, t.logprob, tuple(
                            (a.token, a.logprob) for a in getattr(t, "top_logprobs", None)
                            or ())) for t in getattr(part, "logprobs", None) or ())
                    elif part.type == "refusal":
                        texts.append(part.refusal)
                        refused = True
            elif kind == "function_call":
                calls.append(ToolCall(item.call_id, item.name, item.arguments or ""))
            elif kind == "reasoning" and self.reasoning_items:
                reasoning.append(Reasoning(ORIGIN, "reasoning_item", _plain(item),
                                           model=self.model))
        details = getattr(raw, "incomplete_details", None)
        reason = getattr(details, "reason", None) if status == "incomplete" else None
        stop = (_INCOMPLETE_STOP.get(reason or "", "length") if status == "incomplete"
                else "tool_calls" if calls else "refusal" if refused else "end")
        return ModelResponse("".join(texts), tuple(calls), _usage(getattr(raw, "usage", None)),
                             getattr(raw, "model", None) or self.model, tuple(reasoning), stop,
                             tuple(tokens))

    async def _stream_once(self, body: dict[str, Any]
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        stream = await self._client().responses.create(**body)
        final: Any = None
        try:
            async for event in stream:
                kind = getattr(event, "type", None)
                if kind in ("response.output_text.delta", "response.refusal.delta"):
                    if event.delta:
                        yield TextDelta(event.delta)
                elif kind in ("response.completed", "response.incomplete",
                              "response.failed"):
                    final = event.response
                elif kind == "error":
                    raise reported_error(_plain(event), self.provider)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                await close()
        if final is None:
            raise ModelError("openai ended the stream before the response was complete.",
                             "model_error", retryable=True)
        yield self._response(final)


def responses_input(messages: Sequence[Message], model: str | None
                    ) -> list[dict[str, Any]]:
    """A neutral view as Responses API input items: user and assistant messages,
    `function_call` items each answered by its `function_call_output` right after, and,
    before the items of a response, the reasoning items `model` made for it (none when
    `model` is None). Valid by construction (see `replay.provider_items`)."""
    out: list[dict[str, Any]] = []
    ids = CallIds(MAX_ID_LENGTH)
    for item in provider_items(messages):
        if not isinstance(item, Exchange):
            out.append({"role": "user", "content": item.text})
            continue
        if model is not None:
            out.extend(dict(r.data) for r in own_reasoning(item.reasoning, ORIGIN, model))
        if item.text:
            out.append({"role": "assistant", "content": item.text})
        rendered = [ids(c.id) for c in item.calls]
        out.extend({"type": "function_call", "call_id": rid, "name": tool_name(c.name),
                    "arguments": arguments_text(c.arguments)}
                   for rid, c in zip(rendered, item.calls, strict=True))
        out.extend({"type": "function_call_output", "call_id": rid,
                    "output": r.text or "(empty)"}
                   for rid, r in zip(rendered, item.results, strict=True))
    if not any(i.get("role") == "user" for i in out):
        out.insert(0, {"role": "user", "content": CONTINUE})
    return out


def reported_error(error: Mapping[str, Any], provider: str) -> ModelError:
    """An error the API reports inside a response (`status: failed`) or a stream (an
    `error` event), classified like the same error answered with an HTTP status."""
    code = error.get("code")
    status = _ERROR_STATUS.get(code, 500) if isinstance(code, str) else 500
    return status_error(provider, status, error, {}, "the response failed")


def _plain(value: Any) -> dict[str, Any]:
    """An SDK object as JSON-ready data without unset fields (to send back as it came)."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    data: dict[str, Any] = value.to_dict(mode="json", exclude_none=True)
    return data


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage(0, 0, 1)
    cached = getattr(getattr(raw, "input_tokens_details", None), "cached_tokens", 0)
    reasoning = getattr(getattr(raw, "output_tokens_details", None), "reasoning_tokens", 0)
    return Usage(int(getattr(raw, "input_tokens", 0) or 0),
                 int(getattr(raw, "output_tokens", 0) or 0), 1,
                 cache_read_tokens=int(cached or 0), reasoning_tokens=int(reasoning or 0))


def responses_model(name: str, **options: Any) -> ResponsesModel:
    """`get_model("openai-responses:<name>")`."""
    return ResponsesModel(name, **options)
