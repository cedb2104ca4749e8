"""Tool calls that a model wrote as text: `OpenAIModel(..., text_tool_calls=True)`.

Small local models often answer with a tool call as plain JSON content
(`{"name": "transfer_to_billing", "arguments": {...}}`, in a ```json fence, or a list
of them), which an OpenAI-compatible server returns as ordinary text. With the option
on, a response whose whole content is such a call of an offered tool is read as that
call (with a generated call id). Anything else stays text.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from ..core.messages import ToolCall
from ..core.tools import ToolSpec
from .base import ModelResponse

OPENERS = ("{", "[", "```")
"""How a response that may be a text tool call starts (after white space)."""


def may_be_call(text: str) -> bool:
    """Whether text that starts like this could still turn out to be a tool call."""
    head = text.lstrip()
    return not head or head.startswith(OPENERS) or "```".startswith(head)


def read_calls(response: ModelResponse, tools: Sequence[ToolSpec]) -> ModelResponse:
    """`response` with its text read as tool calls when all of it is calls of `tools`."""
    if response.tool_calls or not tools:
        return response
    calls = parse(response.text, {t.name for t in tools})
    if calls is None:
        return response
    return ModelResponse("", calls, response.usage, response.model)


def parse(text: str, names: set[str]) -> tuple[ToolCall, ...] | None:
    """The calls `text` holds, or None when it is not wholly calls of offered tools."""
    body = text.strip()
    if body.startswith("```"):
        end = body.rfind("```")
        if end <= 2:
            return None
        body = body[3:end]
        newline = body.find("\n")  # drop the fence's language tag (```json)
        if newline >= 0 and not body[:newline].strip().startswith(("{", "[")):
            body = body[newline + 1:]
        body = body.strip()
    if not body.startswith(("{", "[")):
        return None
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    items: list[Any] = value if isinstance(value, list) else [value]
    calls: list[ToolCall] = []
    for item in items:
        call = _call(item, names)
        if call is None:
            return None
        calls.append(call)
    return tuple(calls) or None


def _call(item: Any, names: set[str]) -> ToolCall | None:
    if not isinstance(item, dict):
        return None
    name = item.get("name")
    if not isinstance(name, str) or name not in names:
        return None
    args = item.get("arguments", item.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (ValueError, RecursionError):
            return None
    if not isinstance(args, dict) or not set(item) <= {"name", "arguments", "parameters",
                                                        "type", "id"}:
        return None
    return ToolCall(f"call_{uuid.uuid4().hex[:24]}", name, json.dumps(args))
