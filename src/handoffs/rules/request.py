"""What a request shows a rule-based model: the user's message, who received it, what the
agent already did since, and the results it got."""

from __future__ import annotations

import json
import re
from typing import Any

from ..core.handoff import Handoff
from ..core.handoff_tool import DELEGATION_REASON_DESCRIPTION, OWN_ARGUMENTS, REASON_DESCRIPTION
from ..core.messages import AssistantMessage, Message, Note, ToolResult, UserMessage
from ..core.tools import ToolSpec
from ..models.base import ModelRequest
from .rule import Fields

_NOTE = re.compile(
    r"^(?:(?P<delegate>.+?) asks you for a task"
    r"|(?P<a>.+?) handed the conversation to you"
    r"|The user chose to talk to you \(they were with (?P<b>.+?)\)"
    r"|(?P<c>.+?) could not go on, so the conversation is yours"
    r"|A plan gave you this step \(from (?P<d>.+?)\)"
    r"|The conversation was handed to you from (?P<e>.+?))(?:: (?P<why>.*)|\.)$", re.M)
"""The first line of `core.handoff.handoff_note`, in each of its forms."""
_PAYLOAD = re.compile(r"^Payload: (.*)$", re.M)
_REASONS = (REASON_DESCRIPTION, DELEGATION_REASON_DESCRIPTION)


class Seen:
    """What a request shows: the user's message, who received it, what the agent already
    did since, and the results it got."""

    __slots__ = ("agent", "delegate", "done", "first", "fixed", "latest", "offered", "payload",
                 "receiver", "result", "source", "text", "values")

    def __init__(self, request: ModelRequest) -> None:
        messages = list(request.messages)
        self.agent = agent = request.agent
        start = 0
        self.text = ""
        self.receiver: str | None = None
        for i in range(len(messages) - 1, -1, -1):
            m = messages[i]
            if isinstance(m, UserMessage):
                self.text, self.receiver, start = m.text, m.agent, i + 1
                break
        source = reason = ""
        text = handoff_note_text(messages, agent)
        note = _NOTE.search(text)
        if note is not None:
            source = next(v for k, v in note.groupdict().items() if v and k != "why")
            reason = note.group("why") or ""
        self.source = source
        """The agent whose handoff brought this one, if one did."""
        self.delegate = note is not None and note.group("delegate") is not None
        """True when the agent works on a task for another (its answer goes back)."""
        payload = _PAYLOAD.search(text)
        self.payload = " ".join(_flat(parsed(payload.group(1)))) if payload else ""
        """The payload the handoff brought, as text to search."""
        if not self.text:
            self.text = reason
        self.first = self.receiver == agent
        """True when this agent received the message itself (no handoff brought it)."""
        self.offered: dict[str, ToolSpec] = {t.name: t for t in request.tools}
        self.done: set[str] = set()
        self.values: dict[str, Any] = {}
        self.result = ""
        self.latest: list[ToolResult] = []
        """The results of the agent's latest calls, when they are the last messages."""
        for m in messages[start:]:
            if isinstance(m, AssistantMessage) and m.agent == agent:
                self.done.update(c.name for c in m.tool_calls)
                self.latest = []
            elif isinstance(m, ToolResult) and m.agent == agent:
                self.result = m.text
                self.values[m.name] = parsed(m.text)
                self.latest.append(m)
            else:
                self.latest = []
        self.fixed = {"agent": agent, "text": self.text, "source": source, "reason": reason,
                      "result": self.result, "shared": Fields(request.shared),
                      "context": Fields(request.context)}

    def handoff_tool(self, target: str) -> str | None:
        """The offered tool that hands off to `target` (an agent or a tool name)."""
        for name in (Handoff.default_tool_name(target), Handoff.default_ask_name(target),
                     target):
            if name in self.offered:
                return name
        return None


def handoff_note_text(messages: list[Message], agent: str) -> str:
    """The note of the handoff that gave `agent` the work, as it matters now: the whole
    note until the agent has answered in words since, then only a note that carries a
    payload (what the transcript does not show)."""
    answered = False
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, Note):
            if m.to_model and m.text.startswith(("# Handoff", "# Delegation")):
                if answered and _PAYLOAD.search(m.text) is None:
                    return ""
                return m.text
        elif isinstance(m, AssistantMessage) and m.agent == agent and m.text:
            answered = True
    return ""


def parsed(text: str) -> Any:
    """`text` as JSON when it is a JSON object or array, else the text."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return value if isinstance(value, dict | list) else text


def _flat(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _flat(v)]
    if isinstance(value, list):
        return [s for v in value for s in _flat(v)]
    return [str(value)]


def is_handoff(spec: ToolSpec) -> bool:
    """True for a handoff tool (told apart by what a model is shown: its `reason`)."""
    reason = spec.parameters.get("properties", {}).get("reason")
    return isinstance(reason, dict) and reason.get("description") in _REASONS


def asks_task(spec: ToolSpec) -> bool:
    """True for a delegation's tool: it needs a `task` argument."""
    return "task" in spec.parameters.get("required", ())


def payload_schema(spec: ToolSpec) -> tuple[dict[str, Any] | None, bool]:
    """The payload part of a handoff tool's schema (None: it takes none), and whether the
    payload goes nested under `payload` (else its fields are top-level arguments)."""
    params = spec.parameters
    props: dict[str, Any] = params.get("properties", {})
    nested = props.get("payload")
    if isinstance(nested, dict):
        return nested, True
    fields = {k: v for k, v in props.items() if k not in OWN_ARGUMENTS}
    if not fields:
        return None, False
    required = [k for k in params.get("required", ()) if k not in OWN_ARGUMENTS]
    return {"type": "object", "properties": fields, "required": required}, False
