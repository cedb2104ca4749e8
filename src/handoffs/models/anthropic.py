"""`AnthropicModel`: Anthropic's Messages API.

    Runner(team, model="anthropic:claude-sonnet-4-6")   # ANTHROPIC_API_KEY

Built on the official `anthropic` SDK (`pip install 'handoffs[anthropic]'`), imported only
when a model is created. The SDK's own retries are off; `RetryPolicy` retries instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..core.messages import Message, ToolCall
from ..core.names import tool_name
from ..core.output import FINAL_OUTPUT_TOOL
from ..errors import ModelError
from .anthropic_thinking import KINDS as THINKING_KINDS
from .anthropic_thinking import (
    Placed,
    ask,
    blocks_for,
    merged,
    relaxed,
    thinking_on,
    unsigned_calls_as_text,
)
from .base import ModelRequest, ModelResponse, TextDelta, Usage
from .replay import CONTINUE, CallIds, Exchange, arguments_object, provider_items
from .retry import RetryPolicy
from .sdk import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, SDKModel, import_sdk
from .tool_choice import resolve_tool_choice

DEFAULT_MAX_TOKENS = 4096
"""Anthropic requires `max_tokens` on every request; this is ours unless settings say."""


CACHE_CONTROL = {"type": "ephemeral"}
"""An Anthropic cache breakpoint: the prompt up to the block that carries it is cached."""


class AnthropicModel(SDKModel):
    """A `Model` on Anthropic's Messages API: system prompt, `tool_use` / `tool_result`
    blocks, streaming events, prompt-cache breakpoints, usage including cached input
    tokens."""

    provider = "anthropic"

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
        max_tokens: int = DEFAULT_MAX_TOKENS,
        settings: Mapping[str, Any] | None = None,
        cache: bool = True,
    ) -> None:
        """`model` is Anthropic's model name.

        `api_key`: None reads ANTHROPIC_API_KEY. `base_url`: None reads ANTHROPIC_BASE_URL,
        else Anthropic's. `client`: an `anthropic.AsyncAnthropic` to use (a copy without
        its own retries while `max_retries` > 0: one layer retries). `timeout`: seconds
        to wait for the answer (between bytes of a streamed one); a read timeout is not
        sent again (`RetryPolicy.retry_read_timeouts`). `connect_timeout`: seconds to
        connect. `max_retries` and `retry`: see `RetryPolicy` (`retry` wins when given).
        `max_tokens`: the answer's length limit (an answer it cuts is
        `ModelResponse.stop == "length"`). `settings`: request fields sent every time
        (temperature, `thinking`, ...); a request's own settings override them.
        `cache`: mark prompt-cache breakpoints (`cache_breakpoints`), so each call reads
        the agent's system text, tools and earlier messages from Anthropic's cache
        (billed at a tenth of the input price; writing costs 1.25 times it); False sends
        none (`get_model("anthropic:<name>?cache=false")`).
        """
        self._sdk = import_sdk("anthropic", "Anthropic")
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self._api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        self.max_tokens = max_tokens
        self.cache = cache
        """Whether requests carry cache breakpoints (see `cache_breakpoints`)."""
        super().__init__(model, client=client, timeout=timeout, max_retries=max_retries,
                         retry=retry, settings=settings, connect_timeout=connect_timeout,
                         make_client=lambda: self._sdk.AsyncAnthropic(
                             api_key=self._api_key, base_url=self.base_url,
                             timeout=self.http_timeout(), max_retries=0))

    def __repr__(self) -> str:
        return f"AnthropicModel({self.model!r})"

    def _check_credentials(self) -> None:
        if not self._api_key:
            raise ModelError("No Anthropic API key: set ANTHROPIC_API_KEY or pass "
                             "AnthropicModel(api_key=...).", "auth_error")

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The Messages API request body for `request` (without `stream`).

        With extended thinking on (`settings={"thinking": {...}}`), the model's own
        thinking blocks go back in their place in their assistant turns, and a forced tool choice
        is asked for in words instead (`anthropic_thinking`)."""
        settings = ({**self.settings, **request.settings} if request.settings
                    else self.settings)
        thinking = thinking_on(settings)
        turns = anthropic_messages(request.messages, self.model if thinking else None)
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens,
                                "messages": turns}
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = [{"name": t.name, "description": t.description,
                              "input_schema": t.parameters} for t in request.tools]
        choice = resolve_tool_choice(request.tool_choice, request.tools)
        if choice is not None:
            kind, name = choice
            body["tool_choice"] = ({"type": "tool", "name": name} if name is not None
                                   else {"type": "any" if kind == "required" else kind})
        output = request.output
        asked: list[str] = []
        if output is not None:  # no JSON-schema mode: the answer is a call of a final tool
            body.setdefault("tools", []).append({
                "name": FINAL_OUTPUT_TOOL, "input_schema": output.schema,
                "description": f"Give your final answer: a {output.name} object."})
            if choice is None or choice[0] == "auto":
                body["tool_choice"] = {"type": "any"}  # a tool, or the final answer
                if thinking:
                    asked.append(f"Give your final answer by calling {FINAL_OUTPUT_TOOL} "
                                 f"with a {output.name} object.")
        if request.parallel_tool_calls is False and request.tools:
            tool_choice = body.setdefault("tool_choice", {"type": "auto"})
            if tool_choice.get("type") != "none":
                tool_choice["disable_parallel_tool_use"] = True
        body.update(self.settings)
        body.update(request.settings)
        if thinking and "tool_choice" in body:
            body["tool_choice"], instruction = relaxed(body["tool_choice"])
            if instruction is not None and not asked:
                asked.append(instruction)
        for instruction in asked:
            ask(turns, instruction)
        if self.cache:
            cache_breakpoints(body)
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await super().complete(request)
        return final_output(response) if request.output is not None else response

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        async for piece in super().stream(request):
            if isinstance(piece, ModelResponse) and request.output is not None:
                piece = final_output(piece)
            yield piece

    async def _create(self, body: dict[str, Any]) -> Any:
        create = self._client().messages.create
        return await create(**_sdk_arguments(create, body))

    def _response(self, raw: Any) -> ModelResponse:
        texts: list[str] = []
        calls: list[ToolCall] = []
        thought = Placed(self.model)  # thinking: kept opaque, for this model to get back
        for block in getattr(raw, "content", None) or ():
            kind = getattr(block, "type", None)
            if kind == "text":
                texts.append(block.text)
            elif kind == "tool_use":
                calls.append(ToolCall(block.id, block.name, json.dumps(block.input or {})))
            elif kind not in THINKING_KINDS:
                continue  # server-tool blocks are not part of the neutral transcript
            thought.block(kind, block)
        return ModelResponse("".join(texts), tuple(calls), _usage(getattr(raw, "usage", None)),
                             getattr(raw, "model", None) or self.model, thought.done(),
                             stop_of(getattr(raw, "stop_reason", None)))

    async def _stream_once(self, body: dict[str, Any]
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        create = self._client().messages.create
        stream = await create(**_sdk_arguments(create, body))
        # index -> ["text", parts] or ["tool_use", id, name, argument fragments]
        # or ["thinking", parts, signature parts] or ["redacted_thinking", data]
        blocks: dict[int, list[Any]] = {}
        usage = Usage(0, 0, 1)
        model = self.model
        stop: str | None = None
        try:
            async for event in stream:
                kind = getattr(event, "type", None)
                if kind == "message_start":
                    message = event.message
                    model = getattr(message, "model", None) or model
                    usage = _usage(getattr(message, "usage", None))
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "text":
                        blocks[event.index] = ["text", [block.text] if block.text else []]
                        if block.text:
                            yield TextDelta(block.text)
                    elif block.type == "tool_use":
                        blocks[event.index] = ["tool_use", block.id, block.name, []]
                    elif block.type == "thinking":
                        blocks[event.index] = ["thinking", [block.thinking or ""],
                                               [getattr(block, "signature", None) or ""]]
                    elif block.type == "redacted_thinking":
                        blocks[event.index] = ["redacted_thinking", block.data]
                elif kind == "content_block_delta":
                    delta = event.delta
                    entry = blocks.get(event.index)
                    if entry is None:
                        continue
                    if delta.type == "text_delta" and entry[0] == "text":
                        entry[1].append(delta.text)
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta" and entry[0] == "tool_use":
                        entry[3].append(delta.partial_json)
                    elif delta.type == "thinking_delta" and entry[0] == "thinking":
                        entry[1].append(delta.thinking)  # reasoning: not shown as text
                    elif delta.type == "signature_delta" and entry[0] == "thinking":
                        entry[2].append(delta.signature)
                elif kind == "message_delta":
                    stop = stop_of(getattr(event.delta, "stop_reason", None)) or stop
                    u = getattr(event, "usage", None)
                    # message_delta usage is cumulative: it replaces, never adds.
                    out = getattr(u, "output_tokens", None)
                    if out is not None:
                        usage.output_tokens = int(out)
                    inp = getattr(u, "input_tokens", None)
                    if inp:
                        read = getattr(u, "cache_read_input_tokens", None)
                        write = getattr(u, "cache_creation_input_tokens", None)
                        if read is not None:
                            usage.cache_read_tokens = int(read)
                        if write is not None:
                            usage.cache_write_tokens = int(write)
                        usage.input_tokens = (int(inp) + usage.cache_read_tokens
                                              + usage.cache_write_tokens)
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                await close()
        texts: list[str] = []
        calls: list[ToolCall] = []
        thought = Placed(self.model)
        for _, entry in sorted(blocks.items()):
            kind = entry[0]
            if kind == "text":
                texts.extend(entry[1])
                thought.block(kind, None)
            elif kind == "tool_use":
                calls.append(ToolCall(entry[1], entry[2], "".join(entry[3]) or "{}"))
                thought.block(kind, {"id": entry[1]})
            else:
                thought.block(kind, {"thinking": "".join(entry[1]),
                                     "signature": "".join(entry[2])}
                              if kind == "thinking" else {"data": entry[1]})
        yield ModelResponse("".join(texts), tuple(calls), usage, model, thought.done(), stop)


def anthropic_messages(messages: Sequence[Message], thinking: str | None = None
                       ) -> list[dict[str, Any]]:
    """A neutral view as Messages API turns.

    Valid by construction: the first turn is the user's, roles alternate (consecutive
    same-role items become one turn with several blocks), each assistant turn with
    `tool_use` blocks is followed by a user turn that starts with a `tool_result` for
    each of them, ids match ^[a-zA-Z0-9_-]+$, and the last turn is the user's (a view
    ending with another agent's text would otherwise be read as a prefill to continue).

    `thinking`: the model of a request with extended thinking on: its own thinking
    blocks go back in their place, and a final turn that calls tools without them
    is sent as text (`anthropic_thinking`). None: thinking is off and none are sent.
    """
    turns: list[dict[str, Any]] = []
    ids = CallIds()

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if turns and turns[-1]["role"] == role:
            if role == "assistant" and thinking is not None:
                turns[-1]["content"] = merged(turns[-1]["content"], blocks)
            else:
                turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for item in provider_items(messages):
        if not isinstance(item, Exchange):
            add("user", [{"type": "text", "text": item.text}])
            continue
        blocks: list[dict[str, Any]] = (blocks_for(item.reasoning, thinking)
                                        if thinking is not None and item.reasoning else [])
        if item.text.strip():
            blocks.append({"type": "text", "text": item.text})
        rendered = [ids(c.id) for c in item.calls]
        for rid, c in zip(rendered, item.calls, strict=True):
            if thinking is not None and item.reasoning:  # interleaved: back in its place
                blocks.extend(blocks_for(item.reasoning, thinking, c.id))
            blocks.append({"type": "tool_use", "id": rid, "name": tool_name(c.name),
                           "input": arguments_object(c.arguments)})
        if not blocks:
            continue
        add("assistant", blocks)
        if item.calls:
            results: list[dict[str, Any]] = []
            for rid, r in zip(rendered, item.results, strict=True):
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": rid,
                                         "content": r.text or "(empty)"}
                if r.is_error:
                    block["is_error"] = True
                results.append(block)
            add("user", results)
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": CONTINUE}]})
    if turns[-1]["role"] != "user":
        turns.append({"role": "user", "content": [{"type": "text", "text": CONTINUE}]})
    if thinking is not None:
        unsigned_calls_as_text(turns)
    return turns


def cache_breakpoints(body: dict[str, Any]) -> None:
    """Mark Anthropic's prompt-cache breakpoints in `body` (in place), three of the four
    a request may carry: the end of the system text, which caches the tools with it (the
    last tool when there is no system text), and the last block of the last two user
    turns. The newest one writes the conversation so far to the cache; the one before it
    is where the previous request of the same agent ended, so this one reads everything
    up to there even after a long tool loop (the API looks back only 20 blocks from a
    breakpoint for an earlier entry). The prefix stays byte-stable across calls (the
    handoff's note is history, not system text), so the marks keep hitting. A prompt
    shorter than the model's minimum (1,024 tokens for most) is simply not cached."""
    system = body.get("system")
    if isinstance(system, str) and system:
        body["system"] = [{"type": "text", "text": system, "cache_control": CACHE_CONTROL}]
    elif not system and body.get("tools"):
        tools = body["tools"]
        tools[-1] = {**tools[-1], "cache_control": CACHE_CONTROL}
    marked = 0
    turns = body["messages"]
    for i in range(len(turns) - 1, -1, -1):
        turn = turns[i]
        if turn["role"] != "user":
            continue
        content = turn["content"]
        if isinstance(content, str):
            content = turn["content"] = [{"type": "text", "text": content}]
        if content:
            content[-1] = {**content[-1], "cache_control": CACHE_CONTROL}
            marked += 1
        if marked == 2:
            break


def _usage(raw: Any) -> Usage:
    """Anthropic's usage as ours: its `input_tokens` leaves out the tokens read from and
    written to the prompt cache, which are added in (and kept apart as well)."""
    if raw is None:
        return Usage(0, 0, 1)
    read = int(getattr(raw, "cache_read_input_tokens", 0) or 0)
    write = int(getattr(raw, "cache_creation_input_tokens", 0) or 0)
    return Usage(int(getattr(raw, "input_tokens", 0) or 0) + read + write,
                 int(getattr(raw, "output_tokens", 0) or 0), 1,
                 cache_read_tokens=read, cache_write_tokens=write)


def anthropic_model(name: str, **options: Any) -> AnthropicModel:
    """`get_model("anthropic:<name>")`."""
    return AnthropicModel(name, **options)


def final_output(response: ModelResponse) -> ModelResponse:
    """A response that called the final-output tool, as the text answer it carries (the
    runner validates it against the agent's output type)."""
    for c in response.tool_calls:
        if c.name == FINAL_OUTPUT_TOOL:
            stop = response.stop
            return ModelResponse(c.arguments, (), response.usage, response.model,
                                 response.reasoning, stop if stop == "length" else "end")
    return response


STOP_REASONS = {"end_turn": "end", "stop_sequence": "end", "tool_use": "tool_calls",
                "max_tokens": "length", "model_context_window_exceeded": "length",
                "refusal": "refusal"}
"""Anthropic's `stop_reason`s in the library's words (`ModelResponse.stop`)."""


def stop_of(reason: str | None) -> str | None:
    """`ModelResponse.stop` for an Anthropic `stop_reason` (None: not one we name)."""
    return STOP_REASONS.get(reason) if reason else None


_ACCEPTED: dict[Any, frozenset[str] | None] = {}
"""The keyword arguments each SDK `messages.create` (by its function) takes; None: any."""


def _sdk_arguments(create: Any, body: dict[str, Any]) -> dict[str, Any]:
    """`body` as `messages.create` takes it: fields the installed SDK has no argument for
    (`temperature` and `top_p` are gone from newer SDKs' signatures, though the API takes
    them) travel in `extra_body`, so a setting is sent, not a TypeError raised."""
    function = getattr(create, "__func__", create)
    if function not in _ACCEPTED:
        import inspect

        params = inspect.signature(create).parameters.values()
        _ACCEPTED[function] = (None if any(p.kind is inspect.Parameter.VAR_KEYWORD
                                           for p in params)
                               else frozenset(p.name for p in params))
    accepted = _ACCEPTED[function]
    if accepted is None or accepted.issuperset(body):
        return body
    kept = {k: v for k, v in body.items() if k in accepted}
    kept["extra_body"] = {**{k: v for k, v in body.items() if k not in accepted},
                          **(body.get("extra_body") or {})}
    return kept
