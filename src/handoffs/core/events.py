"""Events: every step of a run, as JSON-ready values with stable `type` strings.

A terminal, a web page or a trace viewer can follow a conversation from these alone.
Every event serialises (`to_dict`) to an object with `type`, `session_id`, `turn`, `at`
and the fields of its type:

| type                | fields                                                                |
|---------------------|-----------------------------------------------------------------------|
| run_started         | agent, text                                                           |
| agent_started       | agent, display_name                                                   |
| text_delta          | agent, text (a piece of a streamed answer)                            |
| message             | agent, text (an agent's whole text)                                   |
| tool_called         | agent, tool, call_id, arguments                                       |
| tool_result         | agent, tool, call_id, text, is_error, code? (a repeat), client?       |
| tool_progress       | agent, tool, call_id, message (a running tool's `ctx.progress`)       |
| custom_event        | agent, tool, call_id, name, data (a tool's `ctx.custom_event`)        |
| handoff_requested   | agent, target, tool, call_id, reason                                  |
| handoff_rejected    | agent, target, code, message, record_id                               |
| agent_handoff       | source, target, reason, explanation, record_id, returns, usage?       |
| agent_changed       | agent, previous, display_name, icon, color                            |
| agent_returned      | source, target, record_id, text (the delegate's answer), ok           |
| guardrail_checked   | name, agent, stage (input/output), passed, message, reasoning?, reply? |
| guardrail_tripped   | agent, guardrail, stage (input/output), message, reply?               |
| human_waiting       | agent, display_name                                                   |
| approval_requested  | agent, tool, call_id, arguments (a call waits for a person), client?  |
| approval_decided    | agent, tool, call_id, approved, reason, client?                       |
| remote_status       | agent, task_id, state (a remote agent's A2A task state)               |
| plan_step_started   | step, agent, task                                                     |
| plan_step_completed | step, agent, text, status                                             |
| max_steps_reached   | agent, steps, output (Runner(on_max_steps=...) made the output)       |
| agent_nudged        | agent, code (why it was asked again), message (the note it got)       |
| answer_truncated    | agent, limit (output tokens reached), delivered, tool?, call_id?      |
| run_completed       | status, agent, output, result, usage?, usage_by_model?                |
| run_failed          | status, agent, code, message, result, usage?, usage_by_model?         |
| run_interrupted     | agent, interrupted_turn (the turn before this one died unfinished)    |
| context_changed     | agent, changed (field: new value), reverted? (a failed turn's undo)   |
| model_request       | agent, call, line, system, messages, tools, tool_choice, settings,    |
|                     | view, shared, redacted                                                |
| model_response      | agent, call, latency, text?, tool_calls?, usage?, model?, redacted?,  |
|                     | error? (a failed call: its code and message, instead of the answer)   |

A field marked `?` is not always there: `code` on the result of a repeated call
(`HandoffPolicy.repeated_tool_calls`), `client` (true) on a call of the client's own
tool (`tool_result`: the client's result; `approval_requested`: it waits for the
client's result; `approval_decided`: the client answered), `reasoning` and `reply` when
the guardrail gave them, `tool` and `call_id` on `answer_truncated` when the cut was a
call's. A row that starts with an empty cell goes on with the fields of the row above.
`handoffs.core.event_data` has the same fields as a `TypedDict` per type, which `mypy`
checks every event the runtime makes against. A traced turn's events that open or end a
span also carry `trace_id` and `span_id` (telemetry writes them).

A turn's terminal event (`run_completed`, `run_failed`) is sent once the turn is stored;
a turn that cannot be stored ends with `run_failed` and the store's code instead.
`usage` on `agent_handoff` is what the agent that handed off spent in the turn
(`HandoffRecord.usage`; absent when no model asked); on a terminal event, what the turn
spent, and `usage_by_model` per model (both absent when no model was called). A terminal
event's `result` is `Event.result` (the `RunResult`), not a field of `data`.
`tool_progress` and `custom_event` are sent while the tool still runs (a tool calls
`RunContext.progress` / `custom_event`), before its `tool_result`.
`context_changed` (a team with `Team(context_type=...)`) follows each batch of tool calls
that changed the typed session context, by the agent that called them; what hooks,
guardrails or instructions changed comes when the turn ends, by the agent that ended it.
`model_request` and `model_response` are recorded only with `Runner(inspect=True)`
(`runtime.inspector`): the exact request each model call got and its raw response.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EVENT_TYPES = (
    "run_started", "agent_started", "text_delta", "message", "tool_called", "tool_result",
    "tool_progress", "custom_event",
    "handoff_requested", "handoff_rejected", "agent_handoff", "agent_changed",
    "agent_returned", "guardrail_checked", "guardrail_tripped", "human_waiting",
    "approval_requested", "approval_decided", "remote_status", "plan_step_started",
    "plan_step_completed", "max_steps_reached", "agent_nudged", "answer_truncated",
    "run_completed", "run_failed", "run_interrupted", "context_changed",
    "model_request", "model_response",
)
TERMINAL_EVENTS = frozenset(("run_completed", "run_failed"))


@dataclass(slots=True)
class Event:
    """One step of a run. `data` holds the fields of its `type` (see the table above)."""

    type: str
    session_id: str
    turn: int
    at: float
    data: dict[str, Any]
    result: Any = None
    """On `run_completed` / `run_failed`: the `RunResult` object itself."""
    seq: int = -1
    """Its number in the session's event log (`SessionState.event_seq`), given when the
    turn makes it: what a server sends as the SSE id. -1: not numbered."""

    def __getitem__(self, key: str) -> Any:
        """A field of the event's type: `event["agent"]`."""
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the event's type, or `default` when this type has no such field."""
        return self.data.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-ready data: `type`, `session_id`, `turn`, `at` and its fields
        (the `RunResult` of a terminal event as `result`, itself a dict)."""
        d: dict[str, Any] = {"type": self.type, "session_id": self.session_id,
                             "turn": self.turn, "at": self.at}
        d.update(self.data)
        if self.result is not None:
            d["result"] = self.result.to_dict()
        return d

    @property
    def is_terminal(self) -> bool:
        """True for the turn's last event, `run_completed` or `run_failed`, whose `result`
        is the `RunResult`."""
        return self.type in TERMINAL_EVENTS


class StoredEvent(Event):
    """An event read back from the session's log, not one happening now: what a retried
    request (the same idempotency key) is given of the first request's turn."""

    # Event's fields as they are: no dataclass of its own, whose generated methods would
    # cost every `import handoffs` a compile.
    __slots__ = ()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StoredEvent:
        """An event from its stored data (`to_dict()` plus `seq`); a terminal event's
        `result` stays a dict here (the caller makes the `RunResult`)."""
        data = {k: v for k, v in d.items()
                if k not in ("type", "session_id", "turn", "at", "seq", "result")}
        return cls(d["type"], d["session_id"], d.get("turn", 0), d.get("at", 0.0), data,
                   None, d.get("seq", -1))
