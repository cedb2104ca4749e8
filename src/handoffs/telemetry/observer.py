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
spans (`handoff_spans`); approvals and people's moves join the session's trace (`links`).
Which activation an event belongs to is kept per asyncio task (`frames.FRAME`).

The spans are also made *current* (OpenTelemetry's context) in the task that does the
work: the turn's span from its start to its end, each agent's span from its start, the
`chat` span while the model is called (`chat.TracedModel`) and the `execute_tool` span
while the tool runs (`invoke`, which the runtime calls instead of `Tool.invoke`). So the
spans of other instrumentations (an HTTP client, a database driver) and log records
written meanwhile belong to the right span. The turn's context is detached when it ends,
in the task it started in, so nothing leaks to the caller.

Each event gets the `trace_id` and `span_id` of its span. An error in here is logged,
never raised into the turn.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..core.events import Event
from . import handoff_spans, links, tool_spans
from . import semconv as sc
from .chat import TracedModels, info_of
from .frames import FRAME as _FRAME
from .frames import Frame

if TYPE_CHECKING:
    from .metrics import Instruments
    from .observing import ObservedTurn, Options

log = logging.getLogger(__name__)

_INTERNAL = SpanKind.INTERNAL
_INVALID = trace.INVALID_SPAN
_set_span = trace.set_span_in_context
_attach = otel_context.attach
_detach = otel_context.detach


class Observer:
    """Turns one turn's events into spans (when traced) and metrics (when measured)."""

    __slots__ = ("capture", "delegations", "follows", "frames", "ids", "latency", "metrics",
                 "resuming", "root", "root_ctx", "sid", "sink", "started", "t", "t0",
                 "telemetry", "token", "tool_t0", "trace_id", "tracer")

    def __init__(self, t: ObservedTurn, telemetry: Options, tracer: Any,
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
        self.root: Any = _INVALID
        self.root_ctx: Any = None
        self.started = False
        """Whether this turn has its own `invoke_workflow` span (an operator's reply or a
        decision that does not continue the turn has none)."""
        self.token: Any = None
        """The context token of the turn's span, detached when the turn ends."""
        self.follows: Any = None
        """The span context of the turn this one continues (after an approval)."""
        self.resuming: tuple[str, str] | None = None
        """(agent, record id) of a delegate that waited for approval and goes on now."""
        self.t0 = time.perf_counter()
        self.frames: list[Frame] = []
        self.delegations: dict[str, Any] = {}
        """Open delegation spans by record id (until the delegate answers)."""
        self.latency: dict[str, tuple[float, str, str, str]] = {}
        """Targets whose first output is awaited: (request time, source, target, kind)."""
        self.tool_t0: dict[str, float] = {}
        """When each running tool call started (for `handoffs.tool.duration`)."""
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
        if f is not None:
            return f.ctx
        if self.root_ctx is None and not self.started:
            links.follow_session(self)  # outside a turn: the session's last trace
        return self.root_ctx

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
        error = error or f.error
        for span in f.tools.values():  # never answered: the turn stopped while it ran
            if error is not None:
                span.set_attribute(sc.ERROR_TYPE, error)
                span.set_status(Status(StatusCode.ERROR, error))
            span.end()
        for span in f.asks.values():
            span.end()
        span = f.span
        if span is not None:
            attrs: dict[str, Any] = {}
            if f.input_tokens or f.output_tokens:
                attrs[sc.INPUT_TOKENS] = f.input_tokens
                attrs[sc.OUTPUT_TOKENS] = f.output_tokens
            if error is not None:
                attrs[sc.ERROR_TYPE] = error
                span.set_status(Status(StatusCode.ERROR, error))
            if attrs:
                span.set_attributes(attrs)
            span.end()
            m = self.metrics
            if m is not None:
                m.agent_duration.record(
                    time.perf_counter() - f.start, {sc.AGENT_NAME: f.agent} if error is None
                    else {sc.AGENT_NAME: f.agent, sc.ERROR_TYPE: error})
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
        attrs[sc.CONVERSATION_ID] = self.sid
        if self.follows is None:
            # No explicit parent: the application's current span (an HTTP request's) if any.
            self.root = self.tracer.start_span(name, None, _INTERNAL, attrs)
        else:  # a turn continued after an approval: in the trace of its first part
            self.root = links.continued(self, name, attrs)
        self.started = True
        ctx = self.root_ctx = _set_span(self.root)
        self.token = _attach(ctx)
        links.remember(self, e.at)
        self.t0 = time.perf_counter()
        return self.root

    def run_ended(self, e: Event) -> Any:
        if not self.started:  # a decision that leaves the turn waiting: no turn span
            return self.root if self.root is not _INVALID else None
        try:
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
        finally:
            self._detach()
        return root

    def abandon(self, reason: str) -> None:
        """The turn stopped without a result (cancelled): close what it opened."""
        try:
            self._close("interrupted", reason, None)
            self.root.end()
        except Exception:
            log.warning("telemetry failed closing an interrupted turn", exc_info=True)
        finally:
            self._detach()

    def _detach(self) -> None:
        token, self.token = self.token, None
        if token is not None:
            _detach(token)

    def _close(self, status: str, code: str | None, failed: Frame | None) -> None:
        """End what is still open (`failed` with `code`) and count the turn."""
        for f in reversed(list(self.frames)):
            self.end_frame(f, code if f is failed or failed is None else None)
        for span in self.delegations.values():
            span.end()
        self.delegations.clear()
        attrs: dict[str, Any] = {sc.TURN_STATUS: status}
        root = self.root
        if code is not None:
            root.set_attributes({sc.TURN_STATUS: status, sc.ERROR_TYPE: code})
            root.set_status(Status(StatusCode.ERROR, code))
        else:
            root.set_attribute(sc.TURN_STATUS, status)
        _FRAME.set(None)
        m = self.metrics
        if m is not None:
            m.turn_duration.record(time.perf_counter() - self.t0, attrs)
            m.count(sc.METRIC_TURNS, status, code)

    # -- agents --------------------------------------------------------------------------

    def agent_started(self, e: Event) -> Any:
        name = e.data["agent"]
        cur = self.current()
        caller = None
        resuming = self.resuming
        if cur is None:
            line, parent = None, self.root_ctx
        elif resuming is not None and resuming[0] == name and cur.line is None:
            # a delegate that waited for approval goes on, in its caller's task
            line, parent, caller = resuming[1], cur.ctx, cur
            self.resuming = None
        else:  # the next agent on the same line (or a delegation's first)
            line, parent = cur.line, cur.parent
            self.end_frame(cur)
        attrs: dict[str, Any] = {sc.OPERATION: sc.INVOKE_AGENT, sc.AGENT_NAME: name}
        agent = self.t.team.get(name)
        if agent is not None and agent.description:
            attrs[sc.AGENT_DESCRIPTION] = agent.description
        model = self.t.models.inner.get(name) \
            if isinstance(self.t.models, TracedModels) else None
        info = info_of(model) if model is not None else None
        if info is not None:
            attrs.update(info.agent_attrs)
        span = self.start(f"invoke_agent {name}", parent, attrs)
        f = Frame(self, name, line, parent, span, caller)
        f.model = info
        self.frames.append(f)
        _FRAME.set(f)
        _attach(f.ctx)  # current in this task until the next agent's, or the turn's end
        return span

    def guardrail_checked(self, e: Event) -> Any:
        """A guardrail's verdict: a span event on the checking agent's activation."""
        d = e.data
        cur = self.current()
        span = cur.span if cur is not None and cur.span is not None else self.root
        span.add_event("guardrail_checked", {
            sc.AGENT_NAME: d["agent"], sc.GUARDRAIL: d["name"],
            sc.GUARDRAIL_STAGE: d["stage"], "handoffs.guardrail.passed": d["passed"]})
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
            self.metrics.count(sc.METRIC_GUARDRAIL_TRIPS, d["agent"], d["guardrail"],
                               d["stage"])
        return span

    def human_waiting(self, e: Event) -> Any:
        self.root.add_event("human_waiting", {sc.AGENT_NAME: e.data["agent"]})
        links.waiting(self, e.at)
        if self.metrics is not None:
            self.metrics.count(sc.METRIC_HUMAN_WAITS, e.data["agent"])
        return self.root

    def output(self, e: Event) -> Any:
        """A message or a streamed piece: the first output of a handoff's target ends its
        `handoffs.handoff.latency`."""
        if self.latency:
            waited = self.latency.pop(e.data["agent"], None)
            if waited is not None and self.metrics is not None:
                at, source, target, kind = waited
                self.metrics.handoff_latency.record(max(0.0, e.at - at), {
                    sc.HANDOFF_SOURCE: source, sc.HANDOFF_TARGET: target,
                    sc.HANDOFF_KIND: kind})
        return self.activation_of(e)

    def activation_of(self, e: Event) -> Any:
        cur = self.current()
        if cur is not None and cur.span is not None:
            return cur.span
        if self.root is _INVALID and not self.started:
            links.follow_session(self)
        return self.root if self.root is not _INVALID else None

    invoke = tool_spans.invoke
    """`tl.invoke(ctx, arguments)` with the call's span current (`tool_spans.invoke`)."""


_HANDLERS: dict[str, Any] = {
    "run_started": Observer.run_started,
    "run_completed": Observer.run_ended,
    "run_failed": Observer.run_ended,
    "agent_started": Observer.agent_started,
    "guardrail_checked": Observer.guardrail_checked,
    "guardrail_tripped": Observer.guardrail_tripped,
    "human_waiting": Observer.human_waiting,
    "tool_called": tool_spans.called,
    "tool_result": tool_spans.result,
    "handoff_requested": handoff_spans.requested,
    "handoff_rejected": handoff_spans.rejected,
    "agent_handoff": handoff_spans.accepted,
    "agent_returned": handoff_spans.returned,
    "approval_requested": links.approval_requested,
    "approval_decided": links.approval_decided,
    "message": Observer.output,
    "text_delta": Observer.output,
    "agent_changed": Observer.activation_of,
}
