"""What crosses Temporal's wire, as JSON-ready data: a model's request and response, a
session's state, a turn's events, a turn's result, and an exception raised on a worker.

Workflow code and activities exchange only these dicts (Temporal's default JSON
converter carries them), so a recorded history replays without any handoffs object
being pickled, and a worker of the next release reads what this one wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.events import Event
from ..core.guardrails import GuardrailCheck
from ..core.handoff import HandoffRecord
from ..core.messages import Reasoning, ToolCall, message_from_dict
from ..core.output import OutputSpec
from ..core.session import SessionState
from ..core.tools import ToolSpec
from ..errors import HandoffsError, ModelError
from ..models.base import ModelRequest, ModelResponse, Usage
from ..runtime.state.result import RunError, RunResult, RunStatus


def jsonable(value: Any) -> Any:
    """`value` as JSON-ready data (what `json.dumps` with `default=str` makes of it)."""
    import pydantic_core

    return json.loads(json.dumps(pydantic_core.to_jsonable_python(value, fallback=str)))


# -- model calls --------------------------------------------------------------------------


def request_to(request: ModelRequest) -> dict[str, Any]:
    """A model request as data; its output type travels as its spec's name and JSON
    schema (what a provider is told), so a one-shot `ask` with an output type of its
    own, or of an agent that is not a team member, asks for the same object under
    Temporal; the answer is parsed in the workflow. The shared memory and the context travel
    only when there are some (an offline model reads them: `ModelRequest.shared`), the
    context as JSON data (a pydantic model's fields)."""
    d = {
        "agent": request.agent, "system": request.system,
        "messages": [m.to_dict() for m in request.messages],
        "tools": [tool_to(s) for s in request.tools],
        "tool_choice": request.tool_choice, "settings": jsonable(dict(request.settings)),
        "output": _output_to(request.output),
        "parallel_tool_calls": request.parallel_tool_calls,
    }
    if request.shared:
        d["shared"] = jsonable(dict(request.shared))
    if request.context is not None:
        d["context"] = jsonable(request.context)
    return d


def request_from(d: Mapping[str, Any], output: OutputSpec | None) -> ModelRequest:
    """`request_to`'s data back as a request; `output`: the agent's own spec, if it is a
    team member (used as is by a request recorded when only a flag travelled)."""
    return ModelRequest(
        d["agent"], d["system"], [message_from_dict(m) for m in d["messages"]],
        [tool_from(s) for s in d["tools"]],
        d.get("tool_choice"), dict(d.get("settings") or {}),
        _output_from(d.get("output"), output), d.get("parallel_tool_calls"),
        dict(d.get("shared") or {}), d.get("context"))


def _output_to(spec: OutputSpec | None) -> dict[str, Any] | None:
    if spec is None:
        return None
    return {"name": spec.name, "schema": spec.schema, "strict": spec.strict}


def _output_from(d: Any, own: OutputSpec | None) -> OutputSpec | None:
    """The request's output spec: from its data (the type, only the workflow parses
    with it, is the agent's own when the names agree), or the agent's own for a flag."""
    if isinstance(d, dict):
        kind = own.type if own is not None and own.name == d["name"] else None
        return OutputSpec(d["name"], d["schema"], bool(d["strict"]), kind)
    return own if d else None


def tool_to(spec: ToolSpec) -> dict[str, Any]:
    """A tool's spec as data (`read_only` only when set)."""
    d: dict[str, Any] = {"name": spec.name, "description": spec.description,
                         "parameters": spec.parameters}
    if spec.read_only:
        d["read_only"] = True
    return d


def tool_from(d: Mapping[str, Any]) -> ToolSpec:
    """`tool_to`'s data back as a spec."""
    return ToolSpec(d["name"], d["description"], d["parameters"], bool(d.get("read_only")))


def response_to(response: ModelResponse) -> dict[str, Any]:
    """A model's response as data."""
    return {"text": response.text, "tool_calls": [c.to_dict() for c in response.tool_calls],
            "usage": None if response.usage is None else response.usage.to_dict(),
            "model": response.model,
            "reasoning": [r.to_dict() for r in response.reasoning], "stop": response.stop}


def response_from(d: Mapping[str, Any]) -> ModelResponse:
    """`response_to`'s data back as a response."""
    usage = d.get("usage")
    return ModelResponse(
        d["text"], tuple(ToolCall.from_dict(c) for c in d["tool_calls"]),
        None if usage is None else Usage.from_dict(usage), d.get("model"),
        tuple(Reasoning.from_dict(r) for r in d.get("reasoning") or ()), d.get("stop"))


# -- sessions and events ------------------------------------------------------------------


def state_to(state: SessionState) -> dict[str, Any]:
    """The whole session, with the number its next stored event gets (`event_seq`,
    which `to_dict` leaves out)."""
    d = state.to_dict()
    d["event_seq"] = state.event_seq
    return d


def state_from(d: Mapping[str, Any]) -> SessionState:
    """`state_to`'s data back as a session."""
    state = SessionState.from_dict(d)
    state.event_seq = d.get("event_seq", 0)
    return state


class Dumped:
    """A terminal event's result as the data it was sent as (`to_dict` gives it back),
    which is all a store reads of it."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        return self.data


_EVENT_KEYS = ("type", "session_id", "turn", "at", "result", "seq")


def events_to(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Events as data: `Event.to_dict()` plus `seq`."""
    out = []
    for e in events:
        d = jsonable(e.to_dict())
        d["seq"] = e.seq
        out.append(d)
    return out


def event_from(d: Mapping[str, Any], result: Any = None) -> Event:
    """One of `events_to`'s items (or a stored event's data) back as an `Event`; a
    terminal event's result is `result` when given, else its data (`Dumped`)."""
    data = {k: v for k, v in d.items() if k not in _EVENT_KEYS}
    if result is None and d.get("result") is not None:
        result = Dumped(d["result"])
    return Event(d["type"], d["session_id"], d["turn"], d["at"], data, result,
                 d.get("seq", -1))


# -- results --------------------------------------------------------------------------


def result_to(res: RunResult) -> dict[str, Any]:
    """A turn's result as data, with its events (what the update hands back)."""
    d = res.to_dict()
    d["events"] = events_to(res.events)
    return d


def result_from(d: Mapping[str, Any]) -> RunResult:
    """`result_to`'s data back as a `RunResult` whose `events` are the turn's."""
    err = d.get("error")
    usage = d.get("usage") or {}
    res = RunResult(
        d["session_id"], d["output"], d["agent"], RunStatus(d["status"]), d.get("turn", 0),
        [HandoffRecord.from_dict(r) for r in d.get("handoffs", ())],
        None if err is None else RunError(err["code"], err["message"], err.get("agent")),
        Usage.from_dict(usage) if usage else Usage(),
        {k: Usage.from_dict(v) for k, v in (d.get("usage_by_agent") or {}).items()},
        dict(d.get("steps") or {}), d.get("output_data"),
        {k: Usage.from_dict(v) for k, v in (d.get("usage_by_model") or {}).items()},
        [GuardrailCheck.from_dict(c) for c in d.get("guardrails") or ()])
    events = [event_from(e) for e in d.get("events", ())]
    if events and events[-1].is_terminal:
        events[-1].result = res
    res.bind_events(events)
    return res


# -- errors ---------------------------------------------------------------------------


def error_to(exc: BaseException) -> dict[str, Any]:
    """An exception as data: its class name, message, and a handoffs error's code and
    retry facts."""
    d: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, HandoffsError):
        d["code"] = exc.code
    if isinstance(exc, ModelError):
        d.update(retryable=exc.retryable, retry_after=exc.retry_after, status=exc.status)
    return d


_RAISED: dict[str, type[Exception]] = {}


def error_from(d: Mapping[str, Any]) -> Exception:
    """`error_to`'s data back as an exception: a `ModelError` or `HandoffsError` with its
    code, else an exception of a class with the original's name (so a tool's error reads
    to the model as it does in process)."""
    message = d.get("message", "")
    name = d.get("type", "Exception")
    if "retryable" in d:
        return ModelError(message, d.get("code", "model_error"),
                          retryable=bool(d["retryable"]), retry_after=d.get("retry_after"),
                          status=d.get("status"))
    if "code" in d:
        exc = HandoffsError(message, code=d["code"])
        return exc
    cls = _RAISED.get(name)
    if cls is None:
        cls = _RAISED[name] = type(name, (Exception,), {"__module__": "handoffs.temporal"})
    return cls(message)


def wrong_queue(session_id: str, queue: str, asked: str) -> HandoffsError:
    """The error of a turn sent to task queue `asked` for a session whose workflow runs
    on `queue`."""
    return HandoffsError(
        f"Session {session_id!r} belongs to the Temporal task queue {queue!r}, not "
        f"{asked!r}: send its turns to that queue's workers, or use another session id "
        "(or workflow_prefix).", code="wrong_task_queue")
