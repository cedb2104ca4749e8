"""Tool calls that a model wrote as text: `OpenAIModel(..., text_tool_calls=True)`.

Small local models often answer with a tool call as plain JSON content
(`{"name": "transfer_to_billing", "arguments": {...}}`, in a ```json fence, a list of
them, one per line, or in Qwen's `<tool_call>` tags), which an OpenAI-compatible server
returns as ordinary text. With the option on, a response that is such calls is read as
those calls (with generated call ids). Anything else stays text.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from ..core.messages import ToolCall
from ..core.tools import ToolSpec
from .base import ModelResponse

OPENERS = ("{", "[", "```", "<tool_call>")
"""How a response that may be a text tool call starts (after white space)."""

_CALL_KEYS = frozenset(("name", "arguments", "parameters", "type", "id"))
_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```[a-zA-Z]*")
_DECODER = json.JSONDecoder()


def may_be_call(text: str) -> bool:
    """Whether text that starts like this could still turn out to be a tool call."""
    head = text.lstrip()
    return (not head or head.startswith(OPENERS)
            or any(o.startswith(head) for o in OPENERS[2:]))


def read_calls(response: ModelResponse, tools: Sequence[ToolSpec]) -> ModelResponse:
    """`response` with its text read as tool calls when it is calls (see `parse`)."""
    if response.tool_calls or not tools:
        return response
    found = parse(response.text, {t.name for t in tools})
    if found is None:
        return response
    calls, rest = found
    return ModelResponse(rest, calls, response.usage, response.model, response.reasoning,
                         response.stop)


def parse(text: str, names: set[str]) -> tuple[tuple[ToolCall, ...], str] | None:
    """The calls `text` holds and the text beside them, or None when it is not calls.

    Read as calls: one JSON call object (`{"name": ..., "arguments": {...}}`), a list of
    them, several one after another (one per line), each possibly in a ```json fence or
    a stray one, or in Qwen's `<tool_call>...</tool_call>` tags (text outside the tags is
    kept as the response's text). A call of a tool that is not offered is still a call
    when its shape leaves no doubt (`name` and `arguments`): the runner answers it with
    the tools there are, instead of showing the user raw JSON."""
    body = text.strip()
    rest = ""
    if "<tool_call>" in body:
        blocks = _TAG.findall(body)
        rest = _TAG.sub("", body).replace("</tool_call>", "").strip()
        body = "\n".join(blocks)
    values: list[Any] = []
    i = _skip(body, 0)
    if not body.startswith(("{", "["), i):
        return None
    while i < len(body):
        try:
            value, i = _DECODER.raw_decode(body, i)
        except (ValueError, RecursionError):
            return None
        values.append(value)
        i = _skip(body, i)
    calls: list[ToolCall] = []
    for value in values:
        for item in (value if isinstance(value, list) else [value]):
            call = _call(item, names)
            if call is None:
                return None
            calls.append(call)
    return (tuple(calls), rest) if calls else None


def _skip(body: str, i: int) -> int:
    """Past white space, commas and code fences (```json, a stray ```) from `i`."""
    while i < len(body):
        if body[i].isspace() or body[i] == ",":
            i += 1
            continue
        fence = _FENCE.match(body, i)
        if fence is None:
            break
        i = fence.end()
    return i


def _call(item: Any, names: set[str]) -> ToolCall | None:
    if not isinstance(item, dict):
        return None
    fn = item.get("function")
    if isinstance(fn, dict) and item.get("type", "function") == "function":
        item = fn  # {"type": "function", "function": {"name": ..., "arguments": ...}}
    name = item.get("name")
    if not isinstance(name, str) or not set(item) <= _CALL_KEYS:
        return None
    has_args = "arguments" in item or "parameters" in item
    if name not in names and not has_args:
        return None
    args = item.get("arguments", item.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (ValueError, RecursionError):
            return None
    if not isinstance(args, dict):
        return None
    return ToolCall(f"call_{uuid.uuid4().hex[:24]}", name, json.dumps(args))
