"""A traced turn: its events become spans and metrics as they happen.

The runtime emits an event at every step of a turn (`Turn.emit`); for a turn that is
traced or measured, the observer sits in front of the turn's sink and reads them:

    invoke_workflow [name]                      run_started .. run_completed / run_failed
      invoke_agent {agent}                      agent_started .. the agent hands off or ends
        chat {model}                            each model call (the turn's models, wrapped)
        execute_tool {tool}                     tool_called .. tool_result
        execute_tool transfer_to_{agent}        handoff_requested .. accepted / refused
          invoke_agent {delegate}               a delegation's activation, nested
      invoke_agent {target}                     after a one-way transfer, a sibling

Handoffs made without a tool call (error recovery, plan steps) are `handoff {target}`
spans. Which activation an event belongs to is kept per asyncio task (`frames.FRAME`).
Each event gets the `trace_id` and `span_id` of its span. An error in here is logged,
never raised into the turn.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..core.events import Event
from ..core.handoff import Handoff, HandoffRecord
from . import semconv as sc
from .chat import TracedModels
from .frames import FRAME as _FRAME
from .frames import Frame

if TYPE_CHECKING:
    from ..runtime.state import Turn
    from .config import Telemetry
    from .metrics import Instruments

log = logging.getLogger(__name__)

_INTERNAL = SpanKind.INTERNAL


class Observer:
    """Turns one turn's events into spans (when traced) and metrics (when measured)."""

    __slots__ = ("capture", "delegations", "frames", "ids", "metrics", "root", "root_ctx",
                 "sid", "sink", "t", "t0", "telemetry", "trace_id", "tracer")

    def __init__(self, t: Turn, telemetry: Telemetry, tracer: Any,
                 instruments: Instruments | None) -> None:
        self.t = t
        self.telemetry = telemetry
        self.ids = tracer is not None
        """Whether spans are recorded (and their ids written on the events)."""
        self.tracer = tracer if tracer is not None else trace.NoOpTracer()
        self.metrics = instruments
        self.capture = telemetry.capture_content
        self.sid = t.state.id
        self.sink = t.sink
        self.root: Any = trace.INVALID_SPAN
        self.root_ctx: Any = None
        self.t0 = time.perf_counter()
        self.frames: list[Frame] = []
        self.delegations: dict[str, Any] = {}
        """Open delegation spans by record id (until the delegate answers)."""
        self.trace_id = ""

    def attach(self) -> None:
        """Sit in front of the turn's sink and wrap its models."""
        t = self.t
        t.obs = self
        t.sink = self.on_event
        t.models = TracedModels(t.models, self)

    # -- plumbing ------------------------------------------------------------------------

    def on_event(self, e: Event) -> None:
        handler = _HANDLERS.get(e.type)
        if handler is not None:
            try:
                span = handler(self, e)
                if span is not None and self.ids:
                    c = span.get_span_context()
                    e.data["trace_id"] = self.trace_id or self._trace_id(c.trace_id)
                    e.data["span_id"] = format(c.span_id, "016x")
            except Exception:
                log.warning("telemetry failed on a %s event; the turn goes on", e.type,
                            exc_info=True)
        if self.sink is not None:
            self.sink(e)

    def _trace_id(self, trace_id: int) -> str:
        self.trace_id = format(trace_id, "032x")
        return self.trace_id

    def current(self) -> Frame | None:
        """The activation the running task works for (None: none yet, or another turn's)."""
        f = _FRAME.get()
        return f if f is not None and f.obs is self else None

    def context(self) -> Any:
        f = self.current()
        return f.ctx if f is not None else self.root_ctx

    def start(self, name: str, parent: Any, attributes: dict[str, Any],
              kind: SpanKind = _INTERNAL) -> Any:
        attributes[sc.CONVERSATION_ID] = self.sid
        return self.tracer.start_span(name, parent, kind, attributes)

    def content(self, value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                               default=str)

    def end_frame(self, f: Frame, error: str | None = None) -> None:
        if f.ended:
            return
        f.ended = True
        for span in (*f.tools.values(), *f.asks.values()):
            span.end()
        error = error or f.error
        span = f.span
        attrs: dict[str, Any] = {sc.AGENT_NAME: f.agent}
        if error is not None:
            attrs[sc.ERROR_TYPE] = error
            if span is not None:
                span.set_attribute(sc.ERROR_TYPE, error)
                span.set_status(Status(StatusCode.ERROR, error))
        if span is not None:
            span.end()
            if self.metrics is not None:
                self.metrics.agent_duration.record(time.perf_counter() - f.start, attrs)
        if f in self.frames:
            self.frames.remove(f)

    # -- the turn ------------------------------------------------------------------------

    def run_started(self, e: Event) -> Any:
        name = sc.INVOKE_WORKFLOW
        attrs: dict[str, Any] = {sc.OPERATION: sc.INVOKE_WORKFLOW, sc.TURN: e.turn}
        workflow = self.telemetry.workflow_name
        if workflow:
            attrs[sc.WORKFLOW_NAME] = workflow
            name = f"{name} {workflow}"
        if self.capture:
            attrs[sc.INPUT_MESSAGES] = self.content(
                [{"role": "user", "parts": [{"type": "text", "content": e.data["text"]}]}])
        # No explicit parent: the application's current span (an HTTP request's) if any.
        self.root = self.start(name, None, attrs)
        self.root_ctx = trace.set_span_in_context(self.root)
        self.t0 = time.perf_counter()
        return self.root

    def run_ended(self, e: Event) -> Any:
        res = e.result
        code = e.data.get("code") if e.type == "run_failed" else None
        self._close(str(e.data["status"]), code, self.current())
        root = self.root
        err = getattr(res, "error", None)
        if err is not None and err.exception is not None:
            root.record_exception(err.exception)
        elif code is None and self.capture and res is not None:
            root.set_attribute(sc.OUTPUT_MESSAGES, self.content([{
                "role": "assistant", "parts": [{"type": "text", "content": res.output}],
                "finish_reason": "stop"}]))
        root.end()
        return root

    def abandon(self, reason: str) -> None:
        """The turn stopped without a result (cancelled): close what it opened."""
        try:
            self._close("interrupted", reason, None)
            self.root.end()
        except Exception:
            log.warning("telemetry failed closing an interrupted turn", exc_info=True)

    def _close(self, status: str, code: str | None, failed: Frame | None) -> None:
        """End what is still open (`failed` with `code`) and count the turn."""
        for f in reversed(list(self.frames)):
            self.end_frame(f, code if f is failed or failed is None else None)
        for span in self.delegations.values():
            span.end()
        self.delegations.clear()
        root = self.root
        root.set_attribute(sc.TURN_STATUS, status)
        attrs: dict[str, Any] = {sc.TURN_STATUS: status}
        if code is not None:
            root.set_attribute(sc.ERROR_TYPE, code)
            root.set_status(Status(StatusCode.ERROR, code))
        _FRAME.set(None)
        m = self.metrics
        if m is not None:
            m.turn_duration.record(time.perf_counter() - self.t0, attrs)
            m.turns.add(1, {**attrs, sc.ERROR_TYPE: code} if code is not None else attrs)

    # -- agents --------------------------------------------------------------------------

    def agent_started(self, e: Event) -> Any:
        name = e.data["agent"]
        cur = self.current()
        if cur is None:
            line, parent = None, self.root_ctx
        else:  # the next agent on the same line (or a delegation's first)
            line, parent = cur.line, cur.parent
            self.end_frame(cur)
        attrs: dict[str, Any] = {sc.OPERATION: sc.INVOKE_AGENT, sc.AGENT_NAME: name}
        agent = self.t.team.get(name)
        if agent is not None and agent.description:
            attrs[sc.AGENT_DESCRIPTION] = agent.description
        span = self.start(f"invoke_agent {name}", parent, attrs)
        f = Frame(self, name, line, parent, span)
        self.frames.append(f)
        _FRAME.set(f)
        return span

    def guardrail_tripped(self, e: Event) -> Any:
        d = e.data
        cur = self.current()
        span = cur.span if cur is not None and cur.span is not None else self.root
        attrs = {sc.AGENT_NAME: d["agent"], sc.GUARDRAIL: d["guardrail"],
                 sc.GUARDRAIL_STAGE: d["stage"]}
        span.add_event("guardrail_tripped", attrs)
        if cur is not None:
            cur.error = "guardrail_tripped"
        if self.metrics is not None:
            self.metrics.guardrails.add(1, attrs)
        return span

    def human_waiting(self, e: Event) -> Any:
        self.root.add_event("human_waiting", {sc.AGENT_NAME: e.data["agent"]})
        if self.metrics is not None:
            self.metrics.human_waits.add(1, {sc.AGENT_NAME: e.data["agent"]})
        return self.root

    # -- tools ---------------------------------------------------------------------------

    def tool_called(self, e: Event) -> Any:
        d = e.data
        attrs: dict[str, Any] = {sc.OPERATION: sc.EXECUTE_TOOL, sc.TOOL_NAME: d["tool"],
                                 sc.TOOL_CALL_ID: d["call_id"], sc.TOOL_TYPE: "function"}
        if self.capture:
            attrs[sc.TOOL_ARGUMENTS] = d["arguments"]
        span = self.start(f"execute_tool {d['tool']}", self.context(), attrs)
        cur = self.current()
        if cur is not None:
            cur.tools[d["call_id"]] = span
        return span

    def tool_result(self, e: Event) -> Any:
        d = e.data
        cur = self.current()
        span = cur.tools.pop(d["call_id"], None) if cur is not None else None
        error = "tool_error"
        if span is None:  # no tool by that name: nothing ran, the model is told so
            error = "unknown_tool"
            span = self.start(f"execute_tool {d['tool']}", self.context(), {
                sc.OPERATION: sc.EXECUTE_TOOL, sc.TOOL_NAME: d["tool"],
                sc.TOOL_CALL_ID: d["call_id"], sc.TOOL_TYPE: "function"})
        if self.capture:
            span.set_attribute(sc.TOOL_RESULT, d["text"])
        if d["is_error"]:
            span.set_attribute(sc.ERROR_TYPE, error)
            span.set_status(Status(StatusCode.ERROR, error))
        span.end()
        return span

    # -- handoffs ------------------------------------------------------------------------

    def handoff_requested(self, e: Event) -> Any:
        d = e.data
        cur = self.current()
        call_id = d["call_id"]
        tool_span = cur.tools.get(call_id) if cur is not None else None
        if tool_span is not None:  # a tool returned HandoffTo: nested under that tool
            parent = trace.set_span_in_context(tool_span)
            tool, kind = Handoff.default_tool_name(d["target"]), "programmatic"
        else:
            parent = self.context()
            tool, kind = d["tool"], "llm"
        attrs: dict[str, Any] = {
            sc.OPERATION: sc.EXECUTE_TOOL, sc.TOOL_NAME: tool, sc.TOOL_TYPE: "function",
            sc.HANDOFF_SOURCE: d["agent"], sc.HANDOFF_TARGET: d["target"],
            sc.HANDOFF_KIND: kind}
        if kind == "llm":
            attrs[sc.TOOL_CALL_ID] = call_id
        if self.capture and d.get("reason"):
            attrs[sc.HANDOFF_REASON] = d["reason"]
        span = self.start(f"execute_tool {tool}", parent, attrs)
        if cur is not None:
            cur.asks[call_id] = span
        return span

    def _handoff_span(self, record: HandoffRecord | None, e: Event) -> Any:
        """The span of this record's request, or a new one for a handoff made without a
        tool call (error recovery, a plan step, a refused hook)."""
        cur = self.current()
        if record is not None and record.call_id and cur is not None:
            span = cur.asks.pop(record.call_id, None)
            if span is not None:
                return span
        span = self.delegations.pop(e.data["record_id"], None)
        if span is not None:
            return span
        target = record.target if record is not None else e.data["target"]
        source = record.source if record is not None else e.data.get("source", "")
        return self.start(f"handoff {target}", self.context(), {
            sc.HANDOFF_SOURCE: source, sc.HANDOFF_TARGET: target})

    def handoff_rejected(self, e: Event) -> Any:
        d = e.data
        record = self.t.state.record(d["record_id"])
        span = self._handoff_span(record, e)
        code = d["code"]
        kind = str(record.reason) if record is not None else "llm"
        span.set_attributes({sc.HANDOFF_ACCEPTED: False, sc.HANDOFF_REJECTION: code,
                             sc.HANDOFF_RECORD: d["record_id"], sc.HANDOFF_KIND: kind,
                             sc.ERROR_TYPE: code})
        span.set_status(Status(StatusCode.ERROR, code))
        span.end()
        if self.metrics is not None:
            source = record.source if record is not None else d["agent"]
            self.metrics.handoff(self.t.team, source, d["target"], kind, code)
        return span

    def agent_handoff(self, e: Event) -> Any:
        d = e.data
        rid = d["record_id"]
        record = self.t.state.record(rid)
        span = self._handoff_span(record, e)
        kind = str(d["reason"])
        returns = bool(d["returns"])
        span.set_attributes({sc.HANDOFF_ACCEPTED: True, sc.HANDOFF_RECORD: rid,
                             sc.HANDOFF_KIND: kind, sc.HANDOFF_RETURNS: returns})
        if self.metrics is not None:
            self.metrics.handoff(self.t.team, d["source"], d["target"], kind, "accepted")
        cur = self.current()
        if returns:  # the delegate's activation starts in this task, under this span
            self.delegations[rid] = span
            _FRAME.set(Frame(self, d["target"], rid, trace.set_span_in_context(span)))
            return span
        span.end()
        if cur is not None:  # the source's activation ends with its handoff
            error = None
            if kind == "error_recovery" and record is not None:
                error = str(record.extra.get("error", {}).get("code", "error"))
            self.end_frame(cur, error)
        return span

    def agent_returned(self, e: Event) -> Any:
        d = e.data
        rid = d["record_id"]
        error = None
        if not d.get("ok", True):
            record = self.t.state.record(rid)
            error = "error"
            if record is not None:
                error = str(record.extra.get("error", {}).get("code", "error"))
        for f in [f for f in self.frames if f.line == rid]:
            self.end_frame(f, error)
        span = self.delegations.pop(rid, None)
        if span is None:
            return None
        if error is not None:
            span.set_attribute(sc.ERROR_TYPE, error)
            span.set_status(Status(StatusCode.ERROR, error))
        if self.capture:
            span.set_attribute(sc.TOOL_RESULT, d["text"])
        span.end()
        return span

    def activation_of(self, e: Event) -> Any:
        cur = self.current()
        return cur.span if cur is not None and cur.span is not None else self.root


_HANDLERS: dict[str, Any] = {
    "run_started": Observer.run_started,
    "run_completed": Observer.run_ended,
    "run_failed": Observer.run_ended,
    "agent_started": Observer.agent_started,
    "guardrail_tripped": Observer.guardrail_tripped,
    "human_waiting": Observer.human_waiting,
    "tool_called": Observer.tool_called,
    "tool_result": Observer.tool_result,
    "handoff_requested": Observer.handoff_requested,
    "handoff_rejected": Observer.handoff_rejected,
    "agent_handoff": Observer.agent_handoff,
    "agent_returned": Observer.agent_returned,
    "message": Observer.activation_of,
    "text_delta": Observer.activation_of,
    "agent_changed": Observer.activation_of,
}
