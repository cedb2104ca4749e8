"""`BedrockModel`: Amazon Bedrock's Converse API through the official AWS SDK (`boto3`).

    Runner(team, model="bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0")   # AWS credentials
    Runner(team, model="bedrock:us.amazon.nova-pro-v1:0?region=us-east-1")

One wire format for every Bedrock model (Claude, Nova, Llama, Mistral, ...): `system`,
`toolConfig` with `toolSpec`s, `toolUse` / `toolResult` blocks, structured output
(`outputConfig`), `converse_stream`, usage with prompt-cache reads and writes. Claude's
reasoning blocks (`reasoningContent`, with their signatures, and redacted ones) are kept
on the transcript (`Reasoning(origin="bedrock")`) and sent back first in the assistant
message, only to the same model.

boto3 is synchronous: each call runs in a worker thread (a stream reads its events there
one at a time), so the event loop never blocks. Credentials and region come from boto3's
usual chain (environment, profile, SSO, instance role) or a Bedrock API key
(AWS_BEARER_TOKEN_BEDROCK). `pip install 'handoffs[bedrock]'`; imported only when a model
is created. botocore's own retries are off; `RetryPolicy` retries instead.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..core.messages import Message, Reasoning, ToolCall
from ..core.names import tool_name
from ..errors import ModelError
from .base import ModelRequest, ModelResponse, TextDelta, Usage
from .failures import status_error, to_model_error
from .replay import CONTINUE, CallIds, Exchange, arguments_object, own_reasoning, provider_items
from .retry import RetryPolicy
from .sdk import SDKModel, import_sdk
from .tool_choice import resolve_tool_choice

ORIGIN = "bedrock"
"""The `Reasoning.origin` of this adapter's parts."""
DEFAULT_MAX_TOKENS = 4096
"""`inferenceConfig.maxTokens` unless the settings say (some models' defaults are tiny)."""
_STOP = {"end_turn": "end", "stop_sequence": "end", "tool_use": "tool_calls",
         "max_tokens": "length", "model_context_window_exceeded": "length",
         "guardrail_intervened": "content_filter", "content_filtered": "content_filter"}
_ERROR_STATUS = {
    "throttlingexception": 429, "modelnotreadyexception": 429,
    "servicequotaexceededexception": 429, "accessdeniedexception": 403,
    "unrecognizedclientexception": 403, "invalidsignatureexception": 403,
    "expiredtokenexception": 403, "validationexception": 400,
    "resourcenotfoundexception": 404, "modeltimeoutexception": 408,
    "internalserverexception": 500, "serviceunavailableexception": 503,
    "modelerrorexception": 424, "modelstreamerrorexception": 424,
}
"""The HTTP status each Bedrock error stands for (in-stream errors come with none)."""


class BedrockModel(SDKModel):
    """A `Model` on Bedrock's Converse API (`converse` / `converse_stream`)."""

    provider = "bedrock"

    def __init__(
        self,
        model: str,
        *,
        region: str | None = None,
        profile: str | None = None,
        endpoint_url: str | None = None,
        client: Any = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        settings: Mapping[str, Any] | None = None,
        cache: bool | None = None,
    ) -> None:
        """`model` is a Bedrock model id or inference profile (`anthropic.claude-...`,
        `us.amazon.nova-pro-v1:0`, an ARN).

        `region`: None reads AWS_REGION / AWS_DEFAULT_REGION or the profile's. `profile`:
        a named AWS profile (None: AWS_PROFILE or the default chain). `endpoint_url`:
        another endpoint (a VPC endpoint, a test server). `client`: a boto3
        `bedrock-runtime` client to use as it is. `timeout`: seconds to connect, and to
        wait between bytes of an answer. `max_retries`, `retry`: see `RetryPolicy`.
        `max_tokens`: `inferenceConfig.maxTokens`. `settings`: Converse request fields
        sent every time (`inferenceConfig`, `additionalModelRequestFields` such as
        Claude's `thinking`, `guardrailConfig`, `performanceConfig`); a request's own
        settings override them. `cache`: mark prompt-cache checkpoints (`cache_points`);
        None (default): on for the model families Bedrock caches for (Anthropic's Claude,
        Amazon Nova), off for the others, which refuse them.
        """
        self._boto3 = import_sdk("boto3", "Bedrock", "bedrock")
        self.region = (region or os.environ.get("AWS_REGION")
                       or os.environ.get("AWS_DEFAULT_REGION"))
        self.profile = profile
        self.endpoint_url = endpoint_url
        self.max_tokens = max_tokens
        self.cache = caches(model) if cache is None else cache
        """Whether requests carry `cachePoint` blocks (see `cache_points`)."""
        super().__init__(model, client=client, timeout=timeout, max_retries=max_retries,
                         retry=retry, settings=settings, make_client=self._make_client)

    def __repr__(self) -> str:
        return f"BedrockModel({self.model!r})"

    def _make_client(self) -> Any:
        config_module = import_sdk("botocore.config", "Bedrock", "bedrock")
        session = self._boto3.Session(profile_name=self.profile, region_name=self.region)
        config = config_module.Config(connect_timeout=self.timeout, read_timeout=self.timeout,
                        retries={"total_max_attempts": 1, "mode": "standard"})
        return session.client("bedrock-runtime", endpoint_url=self.endpoint_url,
                              config=config)

    def _classify(self, exc: BaseException) -> ModelError | None:
        return bedrock_error(exc) or to_model_error(exc, self.provider)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """`converse`'s arguments for `request`."""
        messages, used_tools = bedrock_messages(request.messages, self.model)
        body: dict[str, Any] = {"modelId": self.model, "messages": messages,
                                "inferenceConfig": {"maxTokens": self.max_tokens}}
        if request.system:
            body["system"] = [{"text": request.system}]
        tools = [{"toolSpec": {"name": t.name, "description": t.description or t.name,
                               "inputSchema": {"json": t.parameters}}}
                 for t in request.tools]
        if not tools and used_tools:
            # Bedrock refuses toolUse / toolResult blocks without a toolConfig; a tool the
            # agent no longer offers is declared so that its history can be read.
            tools = [{"toolSpec": {"name": name, "description": name,
                                   "inputSchema": {"json": {"type": "object"}}}}
                     for name in used_tools]
        if tools:
            body["toolConfig"] = {"tools": tools}
            choice = resolve_tool_choice(request.tool_choice, request.tools)
            if choice is not None and choice[0] != "none":  # Converse has no "none"
                kind, name = choice
                body["toolConfig"]["toolChoice"] = (
                    {"tool": {"name": name}} if name is not None
                    else {"any": {}} if kind == "required" else {"auto": {}})
        output = request.output
        if output is not None:
            body["outputConfig"] = {"textFormat": {"type": "json_schema", "structure": {
                "jsonSchema": {"name": output.name, "schema": json.dumps(output.schema)}}}}
        for source in (self.settings, request.settings):
            for key, value in source.items():
                if key == "inferenceConfig" and isinstance(value, Mapping):
                    body["inferenceConfig"] = {**body["inferenceConfig"], **value}
                else:
                    body[key] = value
        if self.cache:
            cache_points(body)
        return body

    def _stream_body(self, body: dict[str, Any]) -> dict[str, Any]:
        return body  # streaming is another operation, not a field

    async def _create(self, body: dict[str, Any]) -> Any:
        client = self._client()
        return await asyncio.to_thread(lambda: client.converse(**body))

    def _response(self, raw: Any) -> ModelResponse:
        parts = _Collected(self.model)
        for block in ((raw.get("output") or {}).get("message") or {}).get("content") or ():
            parts.block(block)
        parts.stop_reason = raw.get("stopReason")
        parts.usage = raw.get("usage")
        return parts.response()

    async def _stream_once(self, body: dict[str, Any]
                           ) -> AsyncIterator[TextDelta | ModelResponse]:
        client = self._client()
        answer = await asyncio.to_thread(lambda: client.converse_stream(**body))
        stream = answer["stream"]
        events = iter(stream)
        parts = _Collected(self.model)
        try:
            while True:
                event = await asyncio.to_thread(next, events, None)
                if event is None:
                    break
                text = parts.event(event)
                if text:
                    yield TextDelta(text)
        finally:
            await asyncio.to_thread(stream.close)
        yield parts.response()


class _Collected:
    """A response's blocks, from one answer or from a stream's events."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.texts: list[str] = []
        self.calls: list[ToolCall] = []
        self.reasoning: list[Reasoning] = []
        self.stop_reason: str | None = None
        self.usage: Any = None
        # streamed blocks by index: ["text"] / ["tool", id, name, parts] /
        # ["reasoning", text parts, signature, redacted]
        self._open: dict[int, list[Any]] = {}

    def block(self, block: Mapping[str, Any]) -> None:
        if "text" in block:
            self.texts.append(block["text"])
        elif "toolUse" in block:
            use = block["toolUse"]
            self.calls.append(ToolCall(use.get("toolUseId") or _new_id(), use.get("name", ""),
                                       json.dumps(use.get("input") or {})))
        elif "reasoningContent" in block:
            self._keep(block["reasoningContent"])

    def _keep(self, content: Mapping[str, Any]) -> None:
        redacted = content.get("redactedContent")
        if redacted is not None:
            data: dict[str, Any] = {"redactedContent": base64.b64encode(redacted).decode()}
            self.reasoning.append(Reasoning(ORIGIN, "redacted_content", data, self.model))
        elif content.get("reasoningText") is not None:
            self.reasoning.append(Reasoning(ORIGIN, "reasoning_text",
                                            {"reasoningText": dict(content["reasoningText"])},
                                            self.model))

    def event(self, event: Mapping[str, Any]) -> str | None:
        """Take in one stream event; the text it adds, if any."""
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = (start.get("start") or {}).get("toolUse")
            if use is not None:
                self._open[start["contentBlockIndex"]] = [
                    "tool", use.get("toolUseId"), use.get("name", ""), []]
        elif "contentBlockDelta" in event:
            change = event["contentBlockDelta"]
            index, delta = change["contentBlockIndex"], change.get("delta") or {}
            if "text" in delta:
                self._open.setdefault(index, ["text"])
                self.texts.append(delta["text"])
                return str(delta["text"])
            if "toolUse" in delta:
                entry = self._open.setdefault(index, ["tool", None, "", []])
                entry[3].append(delta["toolUse"].get("input", ""))
            elif "reasoningContent" in delta:
                entry = self._open.setdefault(index, ["reasoning", [], None, None])
                thought = delta["reasoningContent"]
                if "text" in thought:
                    entry[1].append(thought["text"])
                if "signature" in thought:
                    entry[2] = thought["signature"]
                if "redactedContent" in thought:
                    entry[3] = thought["redactedContent"]
        elif "contentBlockStop" in event:
            entry = self._open.pop(event["contentBlockStop"]["contentBlockIndex"], [""])
            if entry[0] == "tool":
                self.calls.append(ToolCall(entry[1] or _new_id(), entry[2],
                                           "".join(entry[3]) or "{}"))
            elif entry[0] == "reasoning":
                self._keep({"redactedContent": entry[3]} if entry[3] is not None else {
                    "reasoningText": {"text": "".join(entry[1])}
                    | ({"signature": entry[2]} if entry[2] else {})})
        elif "messageStop" in event:
            self.stop_reason = event["messageStop"].get("stopReason")
        elif "metadata" in event:
            self.usage = event["metadata"].get("usage")
        return None

    def response(self) -> ModelResponse:
        if self.stop_reason in ("malformed_model_output", "malformed_tool_use"):
            raise ModelError(f"bedrock could not read what its model wrote "
                             f"({self.stop_reason}).", "malformed_output")
        stop = "tool_calls" if self.calls else _STOP.get(self.stop_reason or "", "end")
        return ModelResponse("".join(self.texts), tuple(self.calls), _usage(self.usage),
                             self.model, tuple(self.reasoning), stop)


def bedrock_messages(messages: Sequence[Message], model: str
                     ) -> tuple[list[dict[str, Any]], list[str]]:
    """A neutral view as Converse messages, and the names of the tools its calls use.

    Valid by construction: the first message is the user's, roles alternate (same-role
    items merge into one message), each assistant message with `toolUse` blocks is
    followed by a user message holding a `toolResult` for each, no text block is blank,
    and the model's own reasoning blocks come first in the message they came with.
    """
    out: list[dict[str, Any]] = []
    ids = CallIds()
    used: list[str] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for item in provider_items(messages):
        if not isinstance(item, Exchange):
            add("user", [{"text": item.text}])
            continue
        blocks: list[dict[str, Any]] = [
            {"reasoningContent": _reasoning_block(r)}
            for r in own_reasoning(item.reasoning, ORIGIN, model)]
        if item.text.strip():
            blocks.append({"text": item.text})
        rendered = [ids(c.id) for c in item.calls]
        for rid, c in zip(rendered, item.calls, strict=True):
            name = tool_name(c.name)
            if name not in used:
                used.append(name)
            blocks.append({"toolUse": {"toolUseId": rid, "name": name,
                                       "input": arguments_object(c.arguments)}})
        if not item.calls and not item.text.strip():
            continue
        add("assistant", blocks)
        if item.calls:
            add("user", [{"toolResult": {"toolUseId": rid,
                                         "content": [{"text": r.text or "(empty)"}],
                                         "status": "error" if r.is_error else "success"}}
                         for rid, r in zip(rendered, item.results, strict=True)])
    if not out or out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"text": CONTINUE}]})
    if out[-1]["role"] != "user":
        out.append({"role": "user", "content": [{"text": CONTINUE}]})
    return out, used


def _reasoning_block(part: Reasoning) -> dict[str, Any]:
    if part.kind == "redacted_content":
        return {"redactedContent": base64.b64decode(part.data["redactedContent"])}
    return {"reasoningText": dict(part.data["reasoningText"])}


def bedrock_error(exc: BaseException) -> ModelError | None:
    """The `ModelError` of a botocore failure: a service error (`ClientError`, and its
    `EventStreamError` inside a stream) by its error code; missing credentials or region;
    a connection or timeout failure."""
    names = {c.__name__ for c in type(exc).__mro__}
    if not type(exc).__module__.startswith("botocore"):
        return None
    if "NoCredentialsError" in names or "PartialCredentialsError" in names:
        return ModelError(f"No AWS credentials for Bedrock: {exc}. Set AWS_ACCESS_KEY_ID and "
                          "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK.",
                          "auth_error")
    if "NoRegionError" in names:
        return ModelError("No AWS region for Bedrock: set AWS_REGION or pass "
                          "BedrockModel(region=...).", "auth_error")
    if "ConnectTimeoutError" in names or "ReadTimeoutError" in names:
        return ModelError(f"bedrock did not answer in time: {exc}", "timeout", retryable=True)
    if "ClientError" not in names:
        if "EndpointConnectionError" in names or "ConnectionError" in names:
            return ModelError(f"Could not reach bedrock: {exc}", "model_error",
                              retryable=True)
        return None
    response: Mapping[str, Any] = getattr(exc, "response", None) or {}
    error = response.get("Error") or {}
    meta = response.get("ResponseMetadata") or {}
    code = str(error.get("Code") or "")
    status = _ERROR_STATUS.get(code.lower()) or int(meta.get("HTTPStatusCode") or 500)
    headers = {str(k).lower(): str(v) for k, v in (meta.get("HTTPHeaders") or {}).items()}
    message = str(error.get("Message") or exc)
    details: dict[str, Any] = {"message": f"{code}: {message}", "code": code}
    return status_error("bedrock", status, details, headers, message)


CACHE_POINT = {"cachePoint": {"type": "default"}}
"""A Converse prompt-cache checkpoint: the prompt up to it is cached."""

CACHING_FAMILIES = ("anthropic.claude", "amazon.nova")
"""Model ids (or inference profiles, `us.anthropic.claude-...`) Bedrock caches prompts for."""


def caches(model: str) -> bool:
    """Whether `model` is of a family Bedrock caches prompts for (`CACHING_FAMILIES`)."""
    return any(family in model for family in CACHING_FAMILIES)


def cache_points(body: dict[str, Any]) -> None:
    """Add Converse `cachePoint` blocks to `body` (in place), as `AnthropicModel` marks
    its breakpoints: after the system text (caching the tools with it), and at the end of
    the last two user messages (the newest writes the conversation so far; the one before
    is where the agent's previous request ended)."""
    system = body.get("system")
    if system:
        body["system"] = [*system, CACHE_POINT]
    marked = 0
    for message in reversed(body["messages"]):
        if message.get("role") != "user" or not message.get("content"):
            continue
        message["content"] = [*message["content"], CACHE_POINT]
        marked += 1
        if marked == 2:
            break


def _usage(raw: Any) -> Usage:
    if not raw:
        return Usage(0, 0, 1)
    read = int(raw.get("cacheReadInputTokens") or 0)
    write = int(raw.get("cacheWriteInputTokens") or 0)
    # Bedrock counts cache reads and writes apart from inputTokens, as Anthropic does.
    return Usage(int(raw.get("inputTokens") or 0) + read + write,
                 int(raw.get("outputTokens") or 0), 1,
                 cache_read_tokens=read, cache_write_tokens=write)


def _new_id() -> str:
    return f"tooluse_{uuid.uuid4().hex[:22]}"


def bedrock_model(name: str, **options: Any) -> BedrockModel:
    """`get_model("bedrock:<model-id>")`."""
    return BedrockModel(name, **options)
