"""The shared transcript's message parts.

The transcript is append-only and neutral: no provider's ids, roles or quirks leak
into it, so any provider adapter can render a valid history from it. Each message is
tagged with the agent that produced (or received) it, and has a literal `kind` so that
serialisation and matching are mechanical.

Messages are values: never change one after it is in a transcript (views and stores share
them). They are plain slotted dataclasses rather than frozen ones because a frozen
dataclass costs about four times as much to build, and a handoff builds several.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..errors import HandoffsError

HandoffMark = Literal["transferred", "delegated", "rejected"]
"""How a handoff call ended. Accepted one-way transfers are never replayed to a model."""


@dataclass(slots=True)
class ToolCall:
    """One tool call requested by a model."""

    id: str
    """The call id, unique within the transcript (provider ids are kept as they came)."""
    name: str
    """The tool's name as the model wrote it (it may name no tool at all)."""
    arguments: str
    """The raw argument text from the model; usually JSON, but not trusted to be."""
    handoff: HandoffMark | None = None
    """Set when the call asked for a handoff: how that request ended. None: ordinary call."""

    def to_dict(self) -> dict[str, Any]:
        """The call as JSON-ready data (`from_dict` reads it back)."""
        d: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.handoff is not None:
            d["handoff"] = self.handoff
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolCall:
        """A call from `to_dict()`'s data."""
        return cls(d["id"], d["name"], d["arguments"], d.get("handoff"))


@dataclass(slots=True, frozen=True)
class Reasoning:
    """A provider's own record of its model's reasoning, kept on the assistant message it
    came with and sent back verbatim only to the adapter family (and model) that made it.

    Reasoning models need it back with the rest of the response in the next request
    (Anthropic thinking blocks and their signatures, OpenAI Responses' encrypted reasoning
    items, Gemini's thought signatures, `reasoning_content` of DeepSeek/vLLM-style
    servers); any other provider never sees it. The transcript stays neutral: the data is
    opaque here, only its adapter reads it.
    """

    origin: str
    """The adapter family that made it (`anthropic`, `openai-responses`, `openai-chat`,
    `gemini`, `bedrock`, `litellm`): an adapter sends back only its own family's parts."""
    kind: str
    """What it is in its provider's terms (`thinking`, `redacted_thinking`,
    `reasoning_item`, `thought_signature`, `reasoning_content`)."""
    data: Mapping[str, Any]
    """The provider's payload as JSON-ready data, to send back as it came."""
    model: str | None = None
    """The model that made it, when the provider requires the same one to read it back
    (None: any model of the family may)."""
    call_id: str | None = None
    """The tool call it belongs to (Gemini's signature on a function call); None: the
    response as a whole."""

    def to_dict(self) -> dict[str, Any]:
        """The part as JSON-ready data (`from_dict` reads it back)."""
        d: dict[str, Any] = {"origin": self.origin, "kind": self.kind, "data": dict(self.data)}
        if self.model is not None:
            d["model"] = self.model
        if self.call_id is not None:
            d["call_id"] = self.call_id
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Reasoning:
        """A part from `to_dict()`'s data."""
        return cls(d["origin"], d["kind"], d["data"], d.get("model"), d.get("call_id"))


@dataclass(slots=True)
class UserMessage:
    """A message from the user (or the operator acting for them)."""

    text: str
    agent: str
    """The agent that was active when the message arrived (the one that received it)."""
    kind: ClassVar[Literal["user"]] = "user"
    role: ClassVar[Literal["user"]] = "user"

    def to_dict(self) -> dict[str, Any]:
        """The message as JSON-ready data, tagged with its `kind` (`message_from_dict`
        reads it back)."""
        return {"kind": "user", "text": self.text, "agent": self.agent}


@dataclass(slots=True)
class AssistantMessage:
    """A model's response: text, tool calls, or both."""

    text: str
    agent: str
    """The agent whose model produced this response."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The calls in the order the model made them. Empty: a plain text answer."""
    reasoning: tuple[Reasoning, ...] = ()
    """The provider's own reasoning state that came with this response, in the order it
    came (empty for most models); only the adapter family that made it sends it back."""
    refused: str | None = None
    """Set on a guardrail's reply (`GuardrailResult.trip(reply=...)`): the guardrail that
    refused the turn's user message (or the answer to it). That message, this reply and
    everything between stay in the transcript for people but leave the models' views
    (`core.history`), so a refused message does not derail the next turn. The mark sits
    on the reply because the transcript is append-only: the user's message is stored
    before its check ends. None: an ordinary response."""
    kind: ClassVar[Literal["assistant"]] = "assistant"
    role: ClassVar[Literal["assistant"]] = "assistant"

    def to_dict(self) -> dict[str, Any]:
        """The message as JSON-ready data, tagged with its `kind` (`message_from_dict`
        reads it back)."""
        d: dict[str, Any] = {"kind": "assistant", "text": self.text, "agent": self.agent}
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.reasoning:
            d["reasoning"] = [r.to_dict() for r in self.reasoning]
        if self.refused is not None:
            d["refused"] = self.refused
        return d


@dataclass(slots=True)
class ToolResult:
    """The result of one tool call, given back to the model that made the call."""

    call_id: str
    name: str
    text: str
    agent: str
    """The agent that made the call."""
    is_error: bool = False
    """True when the text is feedback about a failed or refused call."""
    handoff: HandoffMark | None = None
    """Mirrors `ToolCall.handoff` of the call this answers."""
    delegate: str | None = None
    """For a delegation's result (`handoff == "delegated"`): the agent that answered it.
    The `own_tools` view shows that agent the answer as its own message on later turns.
    None: an ordinary call's result (or one stored before this was recorded)."""
    task: str | None = None
    """For a delegation's result: the task the delegate was given (the call's `task`
    argument), None when it was handed the conversation as it was."""
    kind: ClassVar[Literal["tool_result"]] = "tool_result"
    role: ClassVar[Literal["tool"]] = "tool"

    def to_dict(self) -> dict[str, Any]:
        """The message as JSON-ready data, tagged with its `kind` (`message_from_dict`
        reads it back)."""
        d: dict[str, Any] = {
            "kind": "tool_result",
            "call_id": self.call_id,
            "name": self.name,
            "text": self.text,
            "agent": self.agent,
        }
        if self.is_error:
            d["is_error"] = True
        if self.handoff is not None:
            d["handoff"] = self.handoff
        if self.delegate is not None:
            d["delegate"] = self.delegate
        if self.task is not None:
            d["task"] = self.task
        return d


@dataclass(slots=True)
class Note:
    """Text from the runtime, not from a person or a model.

    `to_model=False` notes (turn interrupted, transfer markers) are for people and logs
    only. `to_model=True` notes are feedback the producing agent's model must read, such
    as "your last response was empty"; adapters render them as user-role text.
    """

    text: str
    agent: str
    to_model: bool = False
    kind: ClassVar[Literal["note"]] = "note"
    role: ClassVar[Literal["user"]] = "user"

    def to_dict(self) -> dict[str, Any]:
        """The message as JSON-ready data, tagged with its `kind` (`message_from_dict`
        reads it back)."""
        d: dict[str, Any] = {"kind": "note", "text": self.text, "agent": self.agent}
        if self.to_model:
            d["to_model"] = True
        return d


Message = UserMessage | AssistantMessage | ToolResult | Note
"""Any part of the transcript. Match on the class, or on `.kind`."""


def message_from_dict(d: Mapping[str, Any]) -> Message:
    """Rebuild a message from `Message.to_dict()` output."""
    kind = d.get("kind")
    if kind == "user":
        return UserMessage(d["text"], d["agent"])
    if kind == "assistant":
        calls = tuple(ToolCall.from_dict(c) for c in d.get("tool_calls", ()))
        reasoning = d.get("reasoning")
        refused = d.get("refused")
        if refused is not None:
            return AssistantMessage(d["text"], d["agent"], calls, tuple(
                Reasoning.from_dict(r) for r in reasoning or ()), refused)
        if reasoning:
            return AssistantMessage(d["text"], d["agent"], calls,
                                    tuple(Reasoning.from_dict(r) for r in reasoning))
        return AssistantMessage(d["text"], d["agent"], calls)
    if kind == "tool_result":
        return ToolResult(
            d["call_id"], d["name"], d["text"], d["agent"],
            bool(d.get("is_error", False)), d.get("handoff"), d.get("delegate"),
            d.get("task"),
        )
    if kind == "note":
        return Note(d["text"], d["agent"], bool(d.get("to_model", False)))
    raise HandoffsError(f"Unknown message kind {kind!r}; expected user, assistant, "
                        "tool_result or note.", code="invalid_session")
