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
    """`run_started`: a turn began with the user's text."""

    agent: str
    text: str


class AgentStarted(TypedDict):
    """`agent_started`: an agent starts working on the line."""

    agent: str
    display_name: str


class TextDelta(TypedDict):
    """`text_delta`: a piece of a streamed answer."""

    agent: str
    text: str


class Message(TypedDict):
    """`message`: an agent's whole text."""

    agent: str
    text: str


class ToolCalled(TypedDict):
    """`tool_called`: an agent called a tool (its arguments as the model wrote them)."""

    agent: str
    tool: str
    call_id: str
    arguments: str


class ToolResult(TypedDict):
    """`tool_result`: a tool call's result (`code` on a repeated call's refusal,
    `client` on the result of a client's own tool)."""

    agent: str
    tool: str
    call_id: str
    text: str
    is_error: bool
    code: NotRequired[str]
    client: NotRequired[bool]


class ToolProgress(TypedDict):
    """`tool_progress`: a running tool's `ctx.progress`."""

    agent: str
    tool: str
    call_id: str
    message: str


class CustomEvent(TypedDict):
    """`custom_event`: a running tool's `ctx.custom_event`."""

    agent: str
    tool: str
    call_id: str
    name: str
    data: Any


class HandoffRequested(TypedDict):
    """`handoff_requested`: a model asked for a handoff (`reason`: its explanation)."""

    agent: str
    target: str
    tool: str
    call_id: str
    reason: str


class HandoffRejected(TypedDict):
    """`handoff_rejected`: the policy (or a failed hook) refused a handoff."""

    agent: str
    target: str
    code: str
    message: str
    record_id: str


class AgentHandoff(TypedDict):
    """`agent_handoff`: a handoff was accepted (`usage`: what the source spent)."""

    source: str
    target: str
    reason: str
    explanation: str
    record_id: str
    returns: bool
    usage: NotRequired[dict[str, Any]]


class AgentChanged(TypedDict):
    """`agent_changed`: the session's active agent changed."""

    agent: str
    previous: str | None
    display_name: str
    icon: str | None
    color: str | None


class AgentReturned(TypedDict):
    """`agent_returned`: a delegate answered its caller."""

    source: str
    target: str
    record_id: str
    text: str
    ok: bool


class GuardrailChecked(TypedDict):
    """`guardrail_checked`: a guardrail's verdict (`GuardrailCheck.to_dict`)."""

    name: str
    agent: str
    stage: str
    passed: bool
    message: str
    reasoning: NotRequired[str]
    reply: NotRequired[str]


class GuardrailTripped(TypedDict):
    """`guardrail_tripped`: a guardrail refused the input or the output."""

    agent: str
    guardrail: str
    stage: str
    message: str
    reply: NotRequired[str]


class HumanWaiting(TypedDict):
    """`human_waiting`: the conversation waits for a person."""

    agent: str
    display_name: str


class ApprovalRequested(TypedDict):
    """`approval_requested`: a tool call waits for a person (`client`: for the
    client's result)."""

    agent: str
    tool: str
    call_id: str
    arguments: str
    client: NotRequired[bool]


class ApprovalDecided(TypedDict):
    """`approval_decided`: a waiting call was approved or rejected (`client`: the
    client sent its result)."""

    agent: str
    tool: str
    call_id: str
    approved: bool
    reason: str
    client: NotRequired[bool]


class RemoteStatus(TypedDict):
    """`remote_status`: a remote agent's A2A task state."""

    agent: str
    task_id: str | None
    state: str


class PlanStepStarted(TypedDict):
    """`plan_step_started`: a step of a supervisor's plan began."""

    step: str
    agent: str
    task: str


class PlanStepCompleted(TypedDict):
    """`plan_step_completed`: a step of a plan ended (`status`)."""

    step: str
    agent: str
    text: str
    status: str


class MaxStepsReached(TypedDict):
    """`max_steps_reached`: the turn ran out of steps (`output`: what it says)."""

    agent: str
    steps: int
    output: str


class AgentNudged(TypedDict):
    """`agent_nudged`: an agent was asked again, and why."""

    agent: str
    code: str
    message: str


class AnswerTruncated(TypedDict):
    """`answer_truncated`: the output limit cut a response (`tool`, `call_id`: the
    call it cut)."""

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
    """`run_completed`: the turn ended (its `RunResult` is `Event.result`)."""

    status: str
    agent: str
    output: str


class RunFailed(Spent):
    """`run_failed`: the turn failed (its `RunResult` is `Event.result`)."""

    status: str
    agent: str
    code: str
    message: str


class RunInterrupted(TypedDict):
    """`run_interrupted`: the turn before this one died unfinished."""

    agent: str
    interrupted_turn: int


class ContextChanged(TypedDict):
    """`context_changed`: fields of the typed session context changed (`reverted`:
    a failed turn's undo)."""

    agent: str
    changed: dict[str, Any]
    reverted: NotRequired[bool]


class ModelRequest(TypedDict):
    """`model_request`: what a model call was sent (`Runner(inspect=True)`)."""

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
    """`model_response`: what a model call answered, or its `error`
    (`Runner(inspect=True)`)."""

    agent: str
    call: int
    latency: float
    text: NotRequired[str]
    tool_calls: NotRequired[list[dict[str, str]]]
    usage: NotRequired[dict[str, Any] | None]
    model: NotRequired[str | None]
    redacted: NotRequired[bool]
    error: NotRequired[dict[str, str]]


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
