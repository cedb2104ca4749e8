"""`OpenAIModel`: OpenAI Chat Completions, and every server that speaks it.

    Runner(team, model="openai:gpt-4.1-mini")          # OPENAI_API_KEY
    Runner(team, model="ollama:llama3.2")              # http://localhost:11434/v1
    OPENAI_BASE_URL=http://localhost:8000/v1 ... model="openai:my-model"   # vLLM, llama.cpp

Built on the official `openai` SDK (`pip install 'handoffs[openai]'`), imported only when
a model is created. The SDK's own retries are off; `RetryPolicy` retries instead.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..core.messages import Message, ToolCall
from ..core.names import tool_name
from ..core.narration import looks_like_call
from ..core.tools import ToolSpec
from ..errors import ModelError
from .base import ModelRequest, ModelResponse, TextDelta, TokenLogprobs, Usage
from .chat_reasoning import (
    ThoughtParts,
    call_reasoning,
    extra_content,
    mine,
    said_back,
    said_reasoning,
    signature_of,
    signed_back,
)
from .endpoints import LOCAL_MAX_TOKENS, is_local, is_reasoning_model
from .replay import CONTINUE, CallIds, Exchange, arguments_object, provider_items
from .retry import RetryPolicy
from .sdk import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, SDKModel, import_sdk
from .strict import restore_defaults, strict_schema
from .text_calls import may_be_call, read_calls
from .tool_choice import resolve_tool_choice

OLLAMA_BASE_URL = "http://localhost:11434/v1"
MAX_ID_LENGTH = 40
"""OpenAI rejects tool-call ids longer than this (ids from other APIs often are)."""
MAX_DESCRIPTION_LENGTH = 1024
"""OpenAI rejects longer tool descriptions; ours are cut to fit."""


class OpenAIModel(SDKModel):
    """A `Model` on the Chat Completions API of OpenAI or any compatible server.

    Parallel tool calls and streamed tool-call fragments are supported; usage is read
    from every response (streams ask for it with `stream_options.include_usage`). The
    reasoning state compatible servers return (`reasoning_content` of DeepSeek- and
    vLLM-style servers, the thought signatures Gemini's OpenAI-compatible endpoint puts on
    tool calls in `extra_content`) is kept and sent back to the same model only.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: Any = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        settings: Mapping[str, Any] | None = None,
        provider: str = "openai",
        stream_usage: bool = True,
        text_tool_calls: bool = False,
        local_max_tokens: int | None = LOCAL_MAX_TOKENS,
        local: bool | None = None,
        reasoning_model: bool | None = None,
    ) -> None:
        """`model` is the provider's model name.

        `api_key`: None reads OPENAI_API_KEY (a server at `base_url` that needs no key gets
        a placeholder). `base_url`: None reads OPENAI_BASE_URL, else OpenAI's. `client`: an
        `openai.AsyncOpenAI` to use (a copy without its own retries while `max_retries`
        > 0: one layer retries). `timeout`: seconds to wait for the answer (between bytes
        of a streamed one); a read timeout is not sent again
        (`RetryPolicy.retry_read_timeouts`). `connect_timeout`: seconds to connect.
        `max_retries` and `retry`: see `RetryPolicy` (`retry` wins when given).
        `settings`: request fields sent every time (temperature, max_tokens, ...); a
        request's own settings override them. `stream_usage`: False for servers that
        reject `stream_options`. `reasoning_model`: whether the model takes
        `max_completion_tokens` only (None: known from its name: o1, o3, o4, gpt-5); a
        `max_tokens` setting is then sent under that name.

        For small local models (Ollama, llama.cpp, vLLM): `text_tool_calls=True` reads a
        response whose whole content is a JSON tool call of an offered tool
        (`{"name": ..., "arguments": {...}}`, also in a ```json fence, or a list of them)
        as that call; streamed text that may be such a call is held back until it is
        known. `local_max_tokens`: the `max_tokens` sent to a local server unless the
        settings or the agent's `model_settings` set `max_tokens` /
        `max_completion_tokens`, so a tool choice the server does not enforce cannot
        generate until the context is full; None: none. A server is local when `local`
        says so, or (None) for `ollama:` and a `base_url` on this machine or a private
        network (`endpoints.is_local`); hosted services get no default limit.
        """
        self._sdk = import_sdk("openai", "OpenAI")
        self.provider = provider
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        self._api_key = key or ("unused" if self.base_url else None)
        self.stream_usage = stream_usage
        self.text_tool_calls = text_tool_calls
        where = self.base_url or (str(client.base_url) if client is not None
                                  and getattr(client, "base_url", None) else None)
        if local is None:
            local = provider == "ollama" or is_local(where)
        self.max_tokens = local_max_tokens if local else None
        """The default `max_tokens` of every request (None: none is sent by default)."""
        self.reasoning_model = (is_reasoning_model(model) if reasoning_model is None
                                else reasoning_model)
        """Whether the output limit is sent as `max_completion_tokens` (never `max_tokens`)."""
        super().__init__(model, client=client, timeout=timeout, max_retries=max_retries,
                         retry=retry, settings=settings, connect_timeout=connect_timeout,
                         make_client=self._make_client)

    def _make_client(self) -> Any:
        return self._sdk.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                     timeout=self.http_timeout(), max_retries=0)

    def __repr__(self) -> str:
        return f"OpenAIModel({self.model!r}, provider={self.provider!r})"

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The Chat Completions request body for `request` (without `stream`)."""
        body: dict[str, Any] = {"model": self.model, "messages": chat_messages(
            request.system, request.messages, self.model)}
        if request.tools:
            body["tools"] = [_tool(t) for t in request.tools]
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
        if request.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = request.logprobs
        body.update(self.settings)
        body.update(request.settings)
        limit = self.max_tokens
        if limit is not None and "max_tokens" not in body and "max_completion_tokens" not in body:
            body["max_tokens"] = limit
        if self.reasoning_model and "max_tokens" in body:  # reasoning models refuse it
            value = body.pop("max_tokens")
            body.setdefault("max_completion_tokens", value)
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await super().complete(request)
        if self.text_tool_calls:
            response = read_calls(response, request.tools)
        return with_defaults(response, request.tools)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        pieces = super().stream(request)
        async for piece in (held_back(pieces, request) if self.text_tool_calls else pieces):
            yield (with_defaults(piece, request.tools) if isinstance(piece, ModelResponse)
                   else piece)

    async def _create(self, body: dict[str, Any]) -> Any:
        return await self._client().chat.completions.create(**body)

    def _stream_body(self, body: dict[str, Any]) -> dict[str, Any]:
        body["stream"] = True
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        return body

    def _response(self, raw: Any) -> ModelResponse:
        choices = getattr(raw, "choices", None) or []
        if not choices:
            raise ModelError(f"{self.provider} returned no choices.", "model_error")
        message = choices[0].message
        refusal = getattr(message, "refusal", None)
        text = message.content or refusal or ""
        calls = []
        reasoning = [r for r in (said_reasoning(message, self.model),) if r is not None]
        for tc in getattr(message, "tool_calls", None) or ():
            fn = getattr(tc, "function", None)
            if fn is None:  # a custom (non-function) tool call: we offer none
                continue
            call = ToolCall(tc.id or _new_call_id(), fn.name or "", fn.arguments or "")
            calls.append(call)
            signed = call_reasoning(tc, call.id, self.model)
            if signed is not None:
                reasoning.append(signed)
        stop = "refusal" if refusal and not message.content else stop_of(
            getattr(choices[0], "finish_reason", None))
        return ModelResponse(text, tuple(calls), _usage(getattr(raw, "usage", None)),
                             getattr(raw, "model", None) or self.model, tuple(reasoning),
                             stop, _logprobs(getattr(choices[0], "logprobs", None)))

    async def _stream_once(self, body: dict[str, Any]
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        stream = await self._client().chat.completions.create(**body)
        texts: list[str] = []
        # index -> [id, name, argument fragments, the call's extra_content]
        calls: dict[int, list[Any]] = {}
        thought = ThoughtParts()
        usage: Usage | None = None
        model = self.model
        stop: str | None = None
        try:
            async for chunk in stream:
                model = getattr(chunk, "model", None) or model
                if getattr(chunk, "usage", None) is not None:
                    usage = _usage(chunk.usage)
                for choice in getattr(chunk, "choices", None) or ():
                    if choice.index:
                        continue  # we ask for one choice; ignore any others
                    stop = stop_of(getattr(choice, "finish_reason", None)) or stop
                    delta = choice.delta
                    if delta is None:
                        continue
                    thought.add(delta)  # reasoning: kept, never shown as text
                    piece = delta.content
                    if piece:
                        texts.append(piece)
                        yield TextDelta(piece)
                    for tc in delta.tool_calls or ():
                        index = tc.index if tc.index is not None else len(calls)
                        entry = calls.setdefault(index, [None, "", [], None])
                        if tc.id and entry[0] is None:
                            entry[0] = tc.id
                        fn = tc.function
                        if fn is not None:
                            if fn.name and not entry[1]:
                                entry[1] = fn.name
                            if fn.arguments:
                                entry[2].append(fn.arguments)
                        entry[3] = entry[3] or extra_content(tc)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                await close()
        made = [ToolCall(cid or _new_call_id(), name, "".join(parts))
                for _, (cid, name, parts, _) in sorted(calls.items())]
        reasoning = thought.reasoning(self.model)
        for call, (_, entry) in zip(made, sorted(calls.items()), strict=True):
            if entry[3] is not None:
                reasoning.append(signature_of(entry[3], call.id, self.model))
        yield ModelResponse("".join(texts), tuple(made), usage or Usage(0, 0, 1), model,
                            tuple(reasoning), stop)


def _logprobs(said: Any) -> tuple[TokenLogprobs, ...]:
    """A choice's `logprobs.content` (asked with `top_logprobs`) as `TokenLogprobs`."""
    content = getattr(said, "content", None) if said is not None else None
    if not content:
        return ()
    return tuple(TokenLogprobs(t.token, t.logprob, tuple(
        (a.token, a.logprob) for a in getattr(t, "top_logprobs", None) or ()))
        for t in content)


async def held_back(pieces: AsyncIterator[TextDelta | ModelResponse], request: ModelRequest
                    ) -> AsyncIterator[TextDelta | ModelResponse]:
    """A stream whose text is held back while it may still be a text tool call."""
    held: list[TextDelta] = []
    text = ""
    async for piece in pieces:
        if isinstance(piece, TextDelta):
            if held or not text:
                text += piece.text
                if may_be_call(text):
                    held.append(piece)
                    continue
                for h in held:
                    yield h
                held.clear()
            yield piece
            continue
        response = read_calls(piece, request.tools)
        if (not response.tool_calls or piece.tool_calls) and not looks_like_call(text):
            for h in held:  # not a call after all: the text is shown
                yield h
        yield response


def _tool(t: ToolSpec) -> dict[str, Any]:
    """A tool as Chat Completions takes it: strict whenever strict mode can say its schema
    (a defaulted parameter as a nullable one: `strict.strict_schema`)."""
    strict = strict_schema(t.parameters)
    fn: dict[str, Any] = {"name": t.name, "description": t.description[:MAX_DESCRIPTION_LENGTH],
                          "parameters": t.parameters if strict is None else strict}
    if strict is not None:
        fn["strict"] = True
    return {"type": "function", "function": fn}


def with_defaults(response: ModelResponse, tools: Sequence[ToolSpec]) -> ModelResponse:
    """The response with the `null`s a strict form made the model send for parameters it
    left alone taken out of its calls' arguments, so the tools' defaults apply."""
    if not response.tool_calls:
        return response
    reshaped = {t.name: t.parameters for t in tools
                if (strict := strict_schema(t.parameters)) is not None
                and strict is not t.parameters}
    if reshaped:
        response.tool_calls = tuple(
            ToolCall(c.id, c.name, restore_defaults(c.arguments, reshaped[c.name]), c.handoff)
            if c.name in reshaped else c for c in response.tool_calls)
    return response


def chat_messages(system: str, messages: Sequence[Message], model: str | None = None
                  ) -> list[dict[str, Any]]:
    """A neutral view as Chat Completions messages: every assistant tool call answered by
    a tool message right after it, no tool message without its call, ids of at most 40
    safe characters (see `replay.provider_items` for the rules). `model`: the model of the
    request; reasoning state that model wrote (`chat_reasoning`) goes back on its messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    ids = CallIds(MAX_ID_LENGTH)
    for item in provider_items(messages):
        if not isinstance(item, Exchange):
            out.append({"role": "user", "content": item.text})
            continue
        msg: dict[str, Any] = {"role": "assistant", "content": item.text or None}
        out.append(msg)
        own = mine(item.reasoning, model) if item.reasoning and model else ()
        if own:
            said_back(msg, own)
        if not item.calls:
            continue
        rendered = [ids(c.id) for c in item.calls]
        msg["tool_calls"] = [
            {"id": rid, "type": "function",
             "function": {"name": tool_name(c.name), "arguments": arguments_text(c.arguments)}}
            | signed_back(own, c.id)
            for rid, c in zip(rendered, item.calls, strict=True)]
        for rid, r in zip(rendered, item.results, strict=True):
            out.append({"role": "tool", "tool_call_id": rid, "content": r.text or "(empty)"})
    if len(out) == (1 if system else 0):
        out.append({"role": "user", "content": CONTINUE})
    return out


def arguments_text(raw: str) -> str:
    """The call's argument text as the model wrote it when it is a JSON object; otherwise
    `{}` (compatible servers parse replayed arguments to fill their chat templates)."""
    try:
        if isinstance(json.loads(raw), dict):
            return raw
    except (ValueError, RecursionError):
        pass
    return json.dumps(arguments_object(raw))


STOP_REASONS = {"stop": "end", "tool_calls": "tool_calls", "function_call": "tool_calls",
                "length": "length", "content_filter": "content_filter"}
"""Chat Completions' `finish_reason`s in the library's words (`ModelResponse.stop`)."""


def stop_of(reason: str | None) -> str | None:
    """`ModelResponse.stop` for a `finish_reason` (None: not one we name)."""
    return STOP_REASONS.get(reason) if reason else None


def _usage(raw: Any) -> Usage:
    """Chat Completions usage: `prompt_tokens` counts the cached ones
    (`prompt_tokens_details.cached_tokens`), `completion_tokens` the reasoning ones
    (`completion_tokens_details.reasoning_tokens`)."""
    if raw is None:
        return Usage(0, 0, 1)
    cached = getattr(getattr(raw, "prompt_tokens_details", None), "cached_tokens", 0)
    reasoning = getattr(getattr(raw, "completion_tokens_details", None),
                        "reasoning_tokens", 0)
    return Usage(int(getattr(raw, "prompt_tokens", 0) or 0),
                 int(getattr(raw, "completion_tokens", 0) or 0), 1,
                 cache_read_tokens=int(cached or 0), reasoning_tokens=int(reasoning or 0))


def _new_call_id() -> str:
    # Some compatible servers send calls without ids; the transcript needs unique ones.
    return f"call_{uuid.uuid4().hex[:24]}"


def openai_model(name: str, **options: Any) -> OpenAIModel:
    """`get_model("openai:<name>")`: OpenAI, or the server at OPENAI_BASE_URL."""
    return OpenAIModel(name, **options)


def ollama_model(name: str, **options: Any) -> OpenAIModel:
    """`get_model("ollama:<name>")`: a local Ollama server through its OpenAI protocol, at
    OLLAMA_BASE_URL or http://localhost:11434/v1."""
    options.setdefault("base_url", os.environ.get("OLLAMA_BASE_URL") or OLLAMA_BASE_URL)
    options.setdefault("api_key", "ollama")
    options.setdefault("provider", "ollama")
    return OpenAIModel(name, **options)
