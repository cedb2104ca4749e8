"""The fields of each event type (`Event.data`) as `TypedDict`s, for the type checker.

`Turn.emit` is overloaded on the `type` string (`EventType`), so `mypy --strict` checks
the keys and value types of every event the runtime makes against the class here: a
misspelt key, a missing field or a wrong value type fails the lint. The classes follow
the table of `handoffs.core.events` field for field (a field marked `?` there is
`NotRequired` here; `tests/test_event_types.py` holds the two together), and the JSON
wire format is the same dict: nothing here runs on a turn.

The runtime imports this module for the type checker only (`if TYPE_CHECKING`), so
`import handoffs` never builds these classes. A reader that wants a type's fields typed
may import it and `cast`: `cast(event_data.AgentHandoff, event.data)`.

Two things the table leaves out are on the wire and not here: a traced turn's events
that open or end a span also carry `trace_id` and `span_id` (telemetry writes them), and
a terminal event's `result` is `Event.result`, not a field of `data`.
"""

# No `from __future__ import annotations`: `NotRequired` must be seen when the classes
# are made, so their `__optional_keys__` are right at run time too.
from typing import Any, Literal, NotRequired, TypedDict

EventType = Literal[
    "run_started", "agent_started", "text_delta", "message", "tool_called", "tool_result",
    "tool_progress", "custom_event",
    "handoff_requested", "handoff_rejected", "agent_handoff", "agent_changed",
    "agent_returned", "guardrail_checked", "guardrail_tripped", "human_waiting",
    "approval_requested", "approval_decided", "remote_status", "plan_step_started",
    "plan_step_completed", "max_steps_reached", "agent_nudged", "answer_truncated",
    "run_completed", "run_failed", "run_interrupted", "context_changed",
    "model_request", "model_response",
]
"""Every event's `type` string (`handoffs.core.events.EVENT_TYPES`, as a type)."""


class RunStarted(TypedDict):
    agent: str
    text: str


class AgentStarted(TypedDict):
    agent: str
    display_name: str


class TextDelta(TypedDict):
    agent: str
    text: str


class Message(TypedDict):
    agent: str
    text: str


class ToolCalled(TypedDict):
    agent: str
    tool: str
    call_id: str
    arguments: str


class ToolResult(TypedDict):
    agent: str
    tool: str
    call_id: str
    text: str
    is_error: bool
    code: NotRequired[str]
    client: NotRequired[bool]


class ToolProgress(TypedDict):
    agent: str
    tool: str
    call_id: str
    message: str


class CustomEvent(TypedDict):
    agent: str
    tool: str
    call_id: str
    name: str
    data: Any


class HandoffRequested(TypedDict):
    agent: str
    target: str
    tool: str
    call_id: str
    reason: str


class HandoffRejected(TypedDict):
    agent: str
    target: str
    code: str
    message: str
    record_id: str


class AgentHandoff(TypedDict):
    source: str
    target: str
    reason: str
    explanation: str
    record_id: str
    returns: bool
    usage: NotRequired[dict[str, Any]]


class AgentChanged(TypedDict):
    agent: str
    previous: str | None
    display_name: str
    icon: str | None
    color: str | None


class AgentReturned(TypedDict):
    source: str
    target: str
    record_id: str
    text: str
    ok: bool


class GuardrailChecked(TypedDict):
    name: str
    agent: str
    stage: str
    passed: bool
    message: str
    reasoning: NotRequired[str]
    reply: NotRequired[str]


class GuardrailTripped(TypedDict):
    agent: str
    guardrail: str
    stage: str
    message: str
    reply: NotRequired[str]


class HumanWaiting(TypedDict):
    agent: str
    display_name: str


class ApprovalRequested(TypedDict):
    agent: str
    tool: str
    call_id: str
    arguments: str
    client: NotRequired[bool]


class ApprovalDecided(TypedDict):
    agent: str
    tool: str
    call_id: str
    approved: bool
    reason: str
    client: NotRequired[bool]


class RemoteStatus(TypedDict):
    agent: str
    task_id: str | None
    state: str


class PlanStepStarted(TypedDict):
    step: str
    agent: str
    task: str


class PlanStepCompleted(TypedDict):
    step: str
    agent: str
    text: str
    status: str


class MaxStepsReached(TypedDict):
    agent: str
    steps: int
    output: str


class AgentNudged(TypedDict):
    agent: str
    code: str
    message: str


class AnswerTruncated(TypedDict):
    agent: str
    limit: int | None
    delivered: bool
    tool: NotRequired[str]
    call_id: NotRequired[str]


class Spent(TypedDict, total=False):
    """What a turn spent, on its terminal event (none when no model was called)."""

    usage: dict[str, Any]
    usage_by_model: dict[str, dict[str, Any]]


class RunCompleted(Spent):
    status: str
    agent: str
    output: str


class RunFailed(Spent):
    status: str
    agent: str
    code: str
    message: str


class RunInterrupted(TypedDict):
    agent: str
    interrupted_turn: int


class ContextChanged(TypedDict):
    agent: str
    changed: dict[str, Any]
    reverted: NotRequired[bool]


class ModelRequest(TypedDict):
    agent: str
    call: int
    line: str | None
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    tool_choice: Any
    settings: dict[str, Any]
    view: dict[str, Any]
    shared: Any
    redacted: bool


class ModelResponse(TypedDict):
    agent: str
    call: int
    latency: float
    text: NotRequired[str]
    tool_calls: NotRequired[list[dict[str, str]]]
    usage: NotRequired[dict[str, Any] | None]
    model: NotRequired[str | None]
    redacted: NotRequired[bool]
    error: NotRequired[dict[str, str]]


Terminal = RunCompleted | RunFailed
"""The fields of a turn's terminal event."""

FIELDS: dict[str, type] = {
    "run_started": RunStarted, "agent_started": AgentStarted, "text_delta": TextDelta,
    "message": Message, "tool_called": ToolCalled, "tool_result": ToolResult,
    "tool_progress": ToolProgress, "custom_event": CustomEvent,
    "handoff_requested": HandoffRequested, "handoff_rejected": HandoffRejected,
    "agent_handoff": AgentHandoff, "agent_changed": AgentChanged,
    "agent_returned": AgentReturned, "guardrail_checked": GuardrailChecked,
    "guardrail_tripped": GuardrailTripped, "human_waiting": HumanWaiting,
    "approval_requested": ApprovalRequested, "approval_decided": ApprovalDecided,
    "remote_status": RemoteStatus, "plan_step_started": PlanStepStarted,
    "plan_step_completed": PlanStepCompleted, "max_steps_reached": MaxStepsReached,
    "agent_nudged": AgentNudged, "answer_truncated": AnswerTruncated,
    "run_completed": RunCompleted, "run_failed": RunFailed,
    "run_interrupted": RunInterrupted, "context_changed": ContextChanged,
    "model_request": ModelRequest, "model_response": ModelResponse,
}
"""Each event type's class, by its `type` string (in `EVENT_TYPES` order)."""
