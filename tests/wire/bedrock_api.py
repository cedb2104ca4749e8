"""Amazon Bedrock's Converse API on the wire: request rules, responses, the binary event
stream of ConverseStream, error responses.

Shapes follow the public API reference (POST /model/{modelId}/converse and
/model/{modelId}/converse-stream, Message / ContentBlock / ToolUseBlock /
ToolResultBlock / ReasoningContentBlock, TokenUsage, the stream's events
messageStart ... metadata in the `application/vnd.amazon.eventstream` framing, errors as
`x-amzn-ErrorType` and a `message`). The checks are the ValidationExceptions Bedrock
gives: a conversation that does not start with the user or alternate, toolUse /
toolResult blocks without a toolConfig, results that do not answer the previous turn's
calls, blank text; and Claude's with thinking on: an assistant turn of the current loop
with calls must start with its reasoning block, whose signature this server gave out.
"""

from __future__ import annotations

import binascii
import json
import re
import struct
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from .server import Reply

PATH = re.compile(r"^/model/([^/]+)/(converse|converse-stream)$")
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
FIELDS = {"messages", "system", "inferenceConfig", "toolConfig", "guardrailConfig",
          "additionalModelRequestFields", "promptVariables", "outputConfig",
          "additionalModelResponseFieldPaths", "requestMetadata", "performanceConfig",
          "serviceTier"}


class BedrockWire:
    """The `Provider` of a fake Bedrock runtime; it remembers the reasoning signatures it
    gave out."""

    stream_type = "application/vnd.amazon.eventstream"

    def __init__(self) -> None:
        self.issued: set[str] = set()

    def check(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, str] | None:
        found = PATH.match(path)
        if found is None:
            return 404, f"Invalid URL (POST {path})"
        auth = headers.get("authorization", "")
        if not auth.startswith(("AWS4-HMAC-SHA256 Credential=", "Bearer ")):
            return 403, "Missing Authentication Token"
        problem = self.check_request(unquote(found.group(1)), body)
        return (400, problem) if problem else None

    def check_request(self, model: str, body: Any) -> str | None:
        if not isinstance(body, dict):
            return "Malformed input request, please reformat your input and try again."
        for key in body:
            if key not in FIELDS:
                return f"Unknown field: {key}"
        tools = body.get("toolConfig")
        names = [t["toolSpec"]["name"] for t in (tools or {}).get("tools") or ()]
        for name in names:
            if not NAME.match(name):
                return "Value at 'toolConfig.tools.1.member.toolSpec.name' failed to satisfy " \
                       "constraint: Member must satisfy regular expression pattern: " \
                       "[a-zA-Z0-9_-]+"
        choice = (tools or {}).get("toolChoice") or {}
        if "tool" in choice and choice["tool"].get("name") not in names:
            return "The tool specified in toolChoice is not among the tools."
        points = sum(1 for part in (body.get("system") or [], *(
            m.get("content") or [] for m in body.get("messages") or ())) for b in part
            if isinstance(b, dict) and "cachePoint" in b)
        if points and not any(f in model for f in ("anthropic.claude", "amazon.nova")):
            return f"The model {model} does not support prompt caching (cachePoint)."
        if points > 4:
            return f"A maximum of 4 cachePoint blocks may be provided. Found {points}."
        thinking = ((body.get("additionalModelRequestFields") or {}).get("thinking") or {}
                    ).get("type") == "enabled"
        if thinking and ("any" in choice or "tool" in choice):
            return ("Thinking may not be enabled when tool_choice forces tool use.")
        return self._check_messages(body.get("messages"), tools is not None, thinking)

    def _check_messages(self, messages: Any, has_tools: bool, thinking: bool) -> str | None:
        if not isinstance(messages, list) or not messages:
            return "A conversation must start with a user message. Try again with a " \
                   "conversation that starts with a user message."
        if messages[0].get("role") != "user":
            return "A conversation must start with a user message. Try again with a " \
                   "conversation that starts with a user message."
        turn_start = 0
        for i, m in enumerate(messages):
            if m.get("role") == "user" and any("text" in b for b in m.get("content") or ()):
                turn_start = i
        waiting: list[str] = []
        for i, m in enumerate(messages):
            role, content = m.get("role"), m.get("content")
            if i and messages[i - 1].get("role") == role:
                return "A conversation must alternate between user and assistant roles. " \
                       "Make sure the conversation alternates between user and assistant " \
                       "roles and try again."
            if not isinstance(content, list) or not content:
                return f"The content field in the Message object at messages.{i} is empty."
            results = [b["toolResult"]["toolUseId"] for b in content if "toolResult" in b]
            uses = [b["toolUse"] for b in content if "toolUse" in b]
            if (results or uses) and not has_tools:
                return "The toolConfig field must be defined when using toolUse and " \
                       "toolResult content blocks."
            if sorted(results) != sorted(waiting):
                if len(results) > len(waiting):
                    return (f"The number of toolResult blocks at messages.{i}.content exceeds "
                            "the number of toolUse blocks of previous turn.")
                return (f"Expected toolResult blocks at messages.{i}.content for the "
                        f"following Ids: {', '.join(sorted(set(waiting) - set(results)))}")
            for k, block in enumerate(content):
                if "text" in block and not str(block["text"]).strip():
                    return (f"The text field in the ContentBlock object at "
                            f"messages.{i}.content.{k} is blank. Add text to the text field, "
                            "and try again.")
                thought = (block.get("reasoningContent") or {}).get("reasoningText")
                if thought is not None and thought.get("signature") not in self.issued:
                    return (f"messages.{i}.content.{k}: Invalid `signature` in `thinking` "
                            "block")
            for use in uses:
                if not ID.match(str(use.get("toolUseId", ""))):
                    return f"messages.{i}: toolUseId must match [a-zA-Z0-9_-]+"
            if (thinking and role == "assistant" and uses and i > turn_start
                    and "reasoningContent" not in content[0]):
                return (f"messages.{i}.content.0.type: Expected `thinking` or "
                        "`redacted_thinking`, but found `tool_use`. When `thinking` is "
                        "enabled, a final `assistant` message must start with a thinking "
                        "block (preceeding the lastmost set of `tool_use` and `tool_result` "
                        "blocks).")
            waiting = [u["toolUseId"] for u in uses]
        return None

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {400: "ValidationException", 403: "AccessDeniedException",
                404: "ResourceNotFoundException"}.get(status, "InternalServerException")
        return {"__type": kind, "message": message}

    def encode(self, events: list[dict[str, Any]], request: Any) -> bytes:
        return b"".join(frame(e) for e in events)

    def answered(self, reply: Reply) -> None:
        """Remember the reasoning signatures `reply` gives out as this server's own."""
        message = ((reply.body or {}).get("output") or {}).get("message") or {}
        for block in message.get("content") or ():
            text = (block.get("reasoningContent") or {}).get("reasoningText") or {}
            if text.get("signature"):
                self.issued.add(text["signature"])
        for event in reply.events or ():
            delta = (event.get("contentBlockDelta") or {}).get("delta") or {}
            signature = (delta.get("reasoningContent") or {}).get("signature")
            if signature:
                self.issued.add(signature)


def _header(name: str, value: str) -> bytes:
    raw = value.encode()
    return bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw


def frame(event: dict[str, Any]) -> bytes:
    """One event-stream message: `{"<eventType>": payload}`, or `{"exception": type,
    "message": ...}` for an error inside the stream."""
    if "exception" in event:
        headers = (_header(":message-type", "exception")
                   + _header(":exception-type", event["exception"])
                   + _header(":content-type", "application/json"))
        payload = json.dumps({"message": event["message"]}).encode()
    else:
        (kind, data), = event.items()
        headers = (_header(":event-type", kind) + _header(":content-type", "application/json")
                   + _header(":message-type", "event"))
        payload = json.dumps(data).encode()
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + headers + payload
    return message + struct.pack(">I", binascii.crc32(message))


def tool_use(tid: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": tid, "name": name, "input": arguments}}


def thinking(text: str, signature: str) -> dict[str, Any]:
    return {"reasoningContent": {"reasoningText": {"text": text, "signature": signature}}}


def _usage(usage: tuple[int, int, int, int]) -> dict[str, int]:
    inp, out, read, write = usage
    body = {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out + read + write}
    if read:
        body["cacheReadInputTokens"] = read
    if write:
        body["cacheWriteInputTokens"] = write
    return body


def response(text: str | None = None, uses: Sequence[dict[str, Any]] = (),
             thoughts: Sequence[dict[str, Any]] = (),
             usage: tuple[int, int, int, int] = (12, 5, 0, 0), stop: str | None = None
             ) -> Reply:
    """A ConverseResponse. `usage`: (input, output, cache read, cache write)."""
    content = [*thoughts, *([{"text": text}] if text else []), *uses]
    return Reply(body={
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop or ("tool_use" if uses else "end_turn"),
        "usage": _usage(usage), "metrics": {"latencyMs": 120}})


def stream(pieces: Sequence[str] = (), uses: Sequence[tuple[str, str, Sequence[str]]] = (),
           thoughts: Sequence[tuple[str, str]] = (),
           usage: tuple[int, int, int, int] = (12, 5, 0, 0), stop: str | None = None
           ) -> Reply:
    """ConverseStream events: reasoning (text, signature) blocks, the text in `pieces`,
    then each call as (id, name, input fragments); messageStop, then metadata."""
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    index = 0
    for text, signature in thoughts:
        events += [{"contentBlockDelta": {"contentBlockIndex": index, "delta": {
                       "reasoningContent": {"text": text}}}},
                   {"contentBlockDelta": {"contentBlockIndex": index, "delta": {
                       "reasoningContent": {"signature": signature}}}},
                   {"contentBlockStop": {"contentBlockIndex": index}}]
        index += 1
    if pieces:
        events += [{"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": p}}}
                   for p in pieces]
        events.append({"contentBlockStop": {"contentBlockIndex": index}})
        index += 1
    for tid, name, fragments in uses:
        events.append({"contentBlockStart": {"contentBlockIndex": index, "start": {
            "toolUse": {"toolUseId": tid, "name": name}}}})
        events += [{"contentBlockDelta": {"contentBlockIndex": index, "delta": {
            "toolUse": {"input": f}}}} for f in fragments]
        events.append({"contentBlockStop": {"contentBlockIndex": index}})
        index += 1
    events.append({"messageStop": {"stopReason": stop or ("tool_use" if uses else
                                                           "end_turn")}})
    events.append({"metadata": {"usage": _usage(usage), "metrics": {"latencyMs": 90}}})
    return Reply(events=events)


def status(code: int, error_type: str, message: str = "error") -> Reply:
    """An error response as Bedrock sends it: the type in `x-amzn-ErrorType`."""
    return Reply(code, {"message": message}, headers={"x-amzn-ErrorType": error_type})
