"""Handoff spans: a request (`execute_tool transfer_to_{agent}`) from the model's call to
its acceptance or refusal, and `handoff {agent}` for a handoff made without a tool call.

A refused request is an error span with the rejection code (`error.type` and
`handoffs.handoff.rejection`); an accepted delegation's span lasts until the delegate
answers, with the delegate's activation nested under it. Content (the model's reason,
a delegation's task and payload, the sentence a refused model was given, a delegate's
answer) is recorded only when captured.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from ..core.events import Event
from ..core.handoff import Handoff, HandoffRecord
from . import semconv as sc
from .frames import FRAME, Frame

if TYPE_CHECKING:
    from .observing import Observing


def requested(obs: Observing, e: Event) -> Any:
    d = e.data
    cur = obs.current()
    call_id = d["call_id"]
    tool_span = cur.tools.get(call_id) if cur is not None else None
    if tool_span is not None:  # a tool returned HandoffTo: nested under that tool
        parent = trace.set_span_in_context(tool_span)
        tool, kind = Handoff.default_tool_name(d["target"]), "programmatic"
    else:
        parent = obs.context()
        tool, kind = d["tool"], "llm"
    attrs: dict[str, Any] = {
        sc.OPERATION: sc.EXECUTE_TOOL, sc.TOOL_NAME: tool, sc.TOOL_TYPE: "function",
        sc.HANDOFF_SOURCE: d["agent"], sc.HANDOFF_TARGET: d["target"],
        sc.HANDOFF_KIND: kind}
    if kind == "llm":
        attrs[sc.TOOL_CALL_ID] = call_id
    if obs.capture and d.get("reason"):
        attrs[sc.HANDOFF_REASON] = d["reason"]
    span = obs.start(f"execute_tool {tool}", parent, attrs)
    if cur is not None:
        cur.asks[call_id] = span
    return span


def _span_for(obs: Observing, record: HandoffRecord | None, e: Event) -> tuple[Any, bool]:
    """The span of this record's request, or a new one for a handoff made without a tool
    call (error recovery, a plan step, a refused hook, an operator handing back); and
    whether it is new (its kind not yet said)."""
    cur = obs.current()
    if record is not None and record.call_id and cur is not None:
        span = cur.asks.pop(record.call_id, None)
        if span is not None:
            return span, False
    span = obs.delegations.pop(e.data["record_id"], None)
    if span is not None:
        return span, False
    target = record.target if record is not None else e.data["target"]
    source = record.source if record is not None else e.data.get("source", "")
    return obs.start(f"handoff {target}", obs.context(), {
        sc.OPERATION: sc.HANDOFF, sc.HANDOFF_SOURCE: source,
        sc.HANDOFF_TARGET: target}), True


_SAID = ("llm", "programmatic")
"""The kinds a request span starts with (a record of another kind, as `escalation`, says
so when it is decided)."""


def _content(obs: Observing, record: HandoffRecord | None, attrs: dict[str, Any]) -> None:
    """A delegation's task and the handoff's payload, when content is captured."""
    if record is None:
        return
    task = record.extra.get("task")
    if isinstance(task, str) and task:
        attrs[sc.HANDOFF_TASK] = task
    if record.payload is not None:
        attrs[sc.HANDOFF_PAYLOAD] = json.dumps(record.payload, ensure_ascii=False,
                                               default=str)


def rejected(obs: Observing, e: Event) -> Any:
    d = e.data
    record = obs.t.state.record(d["record_id"])
    span, new = _span_for(obs, record, e)
    code = d["code"]
    kind = str(record.reason) if record is not None else "llm"
    attrs: dict[str, Any] = {sc.HANDOFF_ACCEPTED: False, sc.HANDOFF_REJECTION: code,
                             sc.HANDOFF_RECORD: d["record_id"], sc.ERROR_TYPE: code}
    if new or kind not in _SAID:
        attrs[sc.HANDOFF_KIND] = kind
    if obs.capture:
        attrs[sc.TOOL_RESULT] = d["message"]  # the sentence the requester was given
        _content(obs, record, attrs)
    span.set_attributes(attrs)
    span.set_status(Status(StatusCode.ERROR, code))
    span.end()
    if obs.metrics is not None:
        source = record.source if record is not None else d["agent"]
        obs.metrics.handoff(obs.t.team, source, d["target"], kind, code)
    return span


def accepted(obs: Observing, e: Event) -> Any:
    d = e.data
    rid = d["record_id"]
    record = obs.t.state.record(rid)
    span, new = _span_for(obs, record, e)
    kind = str(d["reason"])
    returns = bool(d["returns"])
    attrs: dict[str, Any] = {sc.HANDOFF_ACCEPTED: True, sc.HANDOFF_RECORD: rid,
                             sc.HANDOFF_RETURNS: returns}
    if new or kind not in _SAID:
        attrs[sc.HANDOFF_KIND] = kind
    if obs.capture:
        _content(obs, record, attrs)
    span.set_attributes(attrs)
    m = obs.metrics
    if m is not None:
        m.handoff(obs.t.team, d["source"], d["target"], kind, "accepted")
        target = obs.t.team.get(d["target"])
        if target is not None and not target.is_human:
            obs.latency[d["target"]] = (record.at if record is not None and record.at
                                        else e.at, d["source"], d["target"], kind)
    cur = obs.current()
    if returns:  # the delegate's activation starts in this task, under this span
        obs.delegations[rid] = span
        FRAME.set(Frame(obs, d["target"], rid, trace.set_span_in_context(span)))
        return span
    span.end()
    if cur is not None:  # the source's activation ends with its handoff
        error = None
        if kind == "error_recovery" and record is not None:
            error = str(record.extra.get("error", {}).get("code", "error"))
        obs.end_frame(cur, error)
    return span


def returned(obs: Observing, e: Event) -> Any:
    d = e.data
    rid = d["record_id"]
    error = None
    if not d.get("ok", True):
        record = obs.t.state.record(rid)
        error = "error"
        if record is not None:
            error = str(record.extra.get("error", {}).get("code", "error"))
    cur = obs.current()
    for f in [f for f in obs.frames if f.line == rid]:
        obs.end_frame(f, error)
    if cur is not None and cur.line == rid and cur.caller is not None:
        # a delegate continued in its caller's task: the caller is current again
        FRAME.set(cur.caller)
        otel_context.attach(cur.caller.ctx)
    span = obs.delegations.pop(rid, None)
    if span is None:
        return cur.span if cur is not None and cur.line == rid else None
    if error is not None:
        span.set_attribute(sc.ERROR_TYPE, error)
        span.set_status(Status(StatusCode.ERROR, error))
    if obs.capture:
        span.set_attribute(sc.TOOL_RESULT, d["text"])
    span.end()
    return span
