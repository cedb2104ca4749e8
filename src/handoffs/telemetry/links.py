"""What happens to a session between turns, in the trace of the turn it belongs to.

A traced turn leaves its span's context in the session (`metadata["trace"]`, a W3C
`traceparent` and the time the turn started or began to wait), stored with the turn. Then:

- a person's decision on a call that waited for approval is an `approval {tool}` span in
  that trace, from the request to the decision, and the turn it continues is a child of
  the first part's `invoke_workflow`: one trace per turn, however long the wait (a span
  link points at the request that made the decision, when it came with its own trace);
- an operator's reply and hand-back, and a user's pick of an agent, are spans in the
  trace of the session's last turn, not traces of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, TraceFlags

from ..core.events import Event
from . import semconv as sc

if TYPE_CHECKING:
    from ..core.handoff import HandoffRecord
    from ..core.session import SessionState
    from .observing import Observing

KEY = "trace"
"""Where a session keeps its last traced turn: `{"traceparent": ..., "at": ...}`."""


def traceparent(c: SpanContext) -> str:
    return f"00-{c.trace_id:032x}-{c.span_id:016x}-{int(c.trace_flags):02x}"


def remember(obs: Observing, at: float) -> None:
    """The turn's span is the session's trace from now on (stored with the turn)."""
    c = obs.root.get_span_context()
    if c.is_valid:  # a turn that is measured but not traced keeps the last one
        obs.t.state.metadata[KEY] = {"traceparent": traceparent(c), "at": at}


def waiting(obs: Observing, at: float) -> None:
    """The turn ends waiting for a person from `at` (an approval, a human agent)."""
    link = obs.t.state.metadata.get(KEY)
    if isinstance(link, dict) and obs.started:
        obs.t.state.metadata[KEY] = {**link, "at": at}  # a new dict: stores keep the old


def stored(state: SessionState) -> tuple[SpanContext, float | None] | None:
    """The session's last traced turn: its span context and when it began to wait."""
    link = state.metadata.get(KEY)
    if not isinstance(link, dict):
        return None
    parts = str(link.get("traceparent", "")).split("-")
    try:
        trace_id, span_id, flags = int(parts[1], 16), int(parts[2], 16), int(parts[3], 16)
    except (IndexError, ValueError):
        return None
    at = link.get("at")
    c = SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(flags))
    return (c, float(at) if isinstance(at, int | float) else None) if c.is_valid else None


def follow_session(obs: Observing) -> None:
    """Outside a turn (an operator's reply): spans go under the session's last turn."""
    found = stored(obs.t.state)
    if found is None:
        obs.root_ctx = otel_context.get_current()
        return
    obs.root = NonRecordingSpan(found[0])
    obs.root_ctx = trace.set_span_in_context(obs.root)


def continued(obs: Observing, name: str, attrs: dict[str, Any]) -> Any:
    """The `invoke_workflow` of a turn continued after an approval: a child of the span
    of its first part, linked to the request that continued it if that has a trace."""
    follows = obs.follows
    parent = trace.set_span_in_context(NonRecordingSpan(follows))
    here = trace.get_current_span().get_span_context()
    links = [Link(here)] if here.is_valid and here.trace_id != follows.trace_id else None
    attrs[sc.TURN_CONTINUED] = True
    return obs.tracer.start_span(name, parent, SpanKind.INTERNAL, attrs, links)


def approval_requested(obs: Observing, e: Event) -> Any:
    d = e.data
    cur = obs.current()
    span = cur.span if cur is not None and cur.span is not None else obs.root
    attrs = {sc.AGENT_NAME: d["agent"], sc.TOOL_NAME: d["tool"], sc.TOOL_CALL_ID: d["call_id"]}
    if obs.capture:
        attrs[sc.TOOL_ARGUMENTS] = d["arguments"]
    span.add_event("approval_requested", attrs)
    waiting(obs, e.at)
    return span


def approval_decided(obs: Observing, e: Event) -> Any:
    """A person's decision: an `approval {tool}` span from the request to now, in the
    trace of the turn that waits; the turn it continues (if it was the last) follows."""
    d = e.data
    state = obs.t.state
    found = stored(state)
    at = None
    parent = None
    if found is not None:
        c, at = found
        obs.follows = c
        obs.root = NonRecordingSpan(c)
        parent = obs.root_ctx = trace.set_span_in_context(obs.root)
    pending = state.pending
    if pending is not None and pending.caller is not None and pending.record:
        obs.resuming = (pending.agent, pending.record)
    approved = bool(d["approved"])
    attrs: dict[str, Any] = {sc.AGENT_NAME: d["agent"], sc.TOOL_NAME: d["tool"],
                             sc.TOOL_CALL_ID: d["call_id"], sc.APPROVAL_APPROVED: approved,
                             sc.CONVERSATION_ID: obs.sid}
    if obs.capture and d.get("reason"):
        attrs[sc.APPROVAL_REASON] = d["reason"]
    start = int(at * 1e9) if at is not None and at <= e.at else None
    span = obs.tracer.start_span(f"approval {d['tool']}", parent, SpanKind.INTERNAL, attrs,
                                 start_time=start)
    span.end(int(e.at * 1e9))
    m = obs.metrics
    if m is not None and at is not None:
        m.approval_wait.record(max(0.0, e.at - at), {
            sc.TOOL_NAME: d["tool"],
            sc.APPROVAL_DECISION: "approved" if approved else "rejected"})
    return span


def picked(tracer: Any, state: SessionState, record: HandoffRecord) -> None:
    """A user's pick of an agent: a `handoff {agent}` span in the session's last trace."""
    found = stored(state)
    parent = trace.set_span_in_context(NonRecordingSpan(found[0])) if found else None
    attrs: dict[str, Any] = {
        sc.OPERATION: sc.HANDOFF, sc.CONVERSATION_ID: state.id,
        sc.HANDOFF_SOURCE: record.source, sc.HANDOFF_TARGET: record.target,
        sc.HANDOFF_KIND: record.reason.value, sc.HANDOFF_ACCEPTED: record.accepted,
        sc.HANDOFF_RECORD: record.id}
    if not record.accepted:
        code = record.rejection or "refused"
        attrs[sc.HANDOFF_REJECTION] = attrs[sc.ERROR_TYPE] = code
    span = tracer.start_span(f"handoff {record.target}", parent, SpanKind.INTERNAL, attrs)
    if not record.accepted:
        span.set_status(trace.Status(trace.StatusCode.ERROR, record.rejection or "refused"))
    span.end()
