"""What a customer is shown when something fails: a stable code and a sentence written
for a customer, never an exception's text, a provider's message, a host name or a key.

A failed turn (`run_failed`, a `RunResult`'s `error`), a failed tool (`tool_result`
with `is_error`), a handoff to the team's fallback (`agent_handoff` with the reason
`error_recovery`, whose explanation is the failure) and a delegate's failure
(`agent_returned` with `ok` false) reach a session's token, the page, the
OpenAI-compatible endpoint, A2A and AG-UI in the copy made here. The operator key, the
inspector, the logs and the traces keep every detail: the stored session and events are
never changed, only what is sent to a customer. The model still sees a failed tool's
error as the call's result (`core.tools`): only its delivery is rewritten.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..runtime.decisions.calls import raised_failure
from ..runtime.effects.inspector import INSPECT_EVENTS
from .pubsub import Heard

if TYPE_CHECKING:
    from ..core.team import Team

EventView = Callable[[dict[str, Any]], "dict[str, Any] | None"]
"""What a client's stream sends of each event: the event, a copy, or None (left out)."""

GENERIC = "Something went wrong on our side; please try again."
"""The sentence for a failure that has none of its own."""

SENTENCES: Mapping[str, str] = {
    "rate_limited": "We are handling many requests right now; please try again in a "
                    "moment.",
    "timeout": "That took too long on our side; please try again.",
    "turn_timeout": "That took too long on our side; please try again.",
    "output_truncated": "The answer came out too long; please ask again, perhaps more "
                        "narrowly.",
    "max_steps": "We could not finish that request; please try again or rephrase it.",
    "context_length_exceeded": "This conversation has grown too long for us to continue; "
                               "please start a new one.",
}
"""A customer's sentence for the failures that deserve their own; any other code gets
`GENERIC`. The code itself is stable and is sent as it is."""

TOOL_FAILED = "This step could not be completed."
"""What a customer sees of a tool that failed (raised, timed out, an MCP tool's error:
`runtime.decisions.calls.raised_failure`). Other error results (a person's rejection,
the runtime's note on a bad call) are sentences already, and go as they are."""

HANDED_TO_FALLBACK = "We passed your conversation to a colleague who can help."
"""What a customer sees as the explanation of a handoff to the team's fallback."""

_ERROR_RECOVERY = "error_recovery"


def sentence(code: str | None) -> str:
    """The customer's sentence for a failure with `code`."""
    return SENTENCES.get(code or "", GENERIC)


def error(code: str | None) -> dict[str, str]:
    """A failure as a customer receives it: `{"code", "message"}`."""
    return {"code": code or "failed", "message": sentence(code)}


def record(r: Mapping[str, Any]) -> Mapping[str, Any]:
    """A handoff record (`HandoffRecord.to_dict()`) as a customer sees it: a handoff to
    the fallback explained by the customer's sentence, not the failure's text, and a
    failed delegate's error (`extra.error`, `extra.answer`) likewise."""
    out = r
    if r.get("reason") == _ERROR_RECOVERY and r.get("explanation"):
        out = {**out, "explanation": HANDED_TO_FALLBACK}
    extra = r.get("extra")
    if isinstance(extra, Mapping) and isinstance(extra.get("error"), Mapping):
        # a delegate that failed: its error, and the answer its caller got, carry the text
        failed = {**extra, "error": {**extra["error"], **error(extra["error"].get("code"))}}
        if "answer" in failed:
            failed["answer"] = GENERIC
        out = {**out, "extra": failed}
    return out


def result(d: Mapping[str, Any]) -> dict[str, Any]:
    """A `RunResult.to_dict()` as a customer sees it (`error` and fallback handoffs)."""
    out = dict(d)
    err = d.get("error")
    if isinstance(err, Mapping):
        out["error"] = {**err, **error(err.get("code"))}
    handoffs = d.get("handoffs")
    if isinstance(handoffs, list):
        out["handoffs"] = [record(r) if isinstance(r, Mapping) else r for r in handoffs]
    return out


def message(m: Mapping[str, Any]) -> Mapping[str, Any]:
    """A transcript message (`Message.to_dict()`) as a customer sees it: a failed tool's
    result is `TOOL_FAILED`."""
    if m.get("kind") == "tool_result" and m.get("is_error") and raised_failure(
            m.get("name") or "", m.get("text") or ""):
        return {**m, "text": TOOL_FAILED}
    return m


def shared(memory: Mapping[str, Any]) -> dict[str, Any]:
    """A session's shared memory as a customer may read it (AG-UI's state): the context
    a handoff to the fallback left (`handoff_context`, its `reason` the failure's text)
    explained by the customer's sentence."""
    out = dict(memory)
    context = out.get("handoff_context")
    if isinstance(context, Mapping) and context.get("handoff_type") == _ERROR_RECOVERY:
        out["handoff_context"] = {**context, "reason": HANDED_TO_FALLBACK}
    return out


def transcript(d: Mapping[str, Any]) -> dict[str, Any]:
    """A transcript (`views.transcript_view`) as a customer sees it (`message`,
    `record`)."""
    return {**d, "messages": [message(m) for m in d.get("messages", ())],
            "handoffs": [record(r) for r in d.get("handoffs", ())]}


def event(e: dict[str, Any]) -> dict[str, Any]:
    """An event (`Event.to_dict()`, with its `seq`) as a customer receives it: the event
    itself when nothing in it is internal (most are: sent as stored, not encoded again),
    else a copy with each failure's text replaced by the customer's sentence."""
    kind = e["type"]
    if kind == "tool_result":
        failed = e.get("is_error") and raised_failure(e.get("tool") or "", e.get("text") or "")
        return {**e, "text": TOOL_FAILED} if failed else e
    if kind == "run_failed":
        out = {**e, "message": sentence(e.get("code"))}
        if isinstance(e.get("result"), Mapping):
            out["result"] = result(e["result"])
        return out
    if kind == "run_completed":
        got = e.get("result")
        if isinstance(got, Mapping) and got.get("handoffs"):
            return {**e, "result": result(got)}
        return e
    if kind == "agent_handoff":
        if e.get("reason") == _ERROR_RECOVERY and e.get("explanation"):
            return {**e, "explanation": HANDED_TO_FALLBACK}
        return e
    if kind == "agent_returned":
        return e if e.get("ok", True) else {**e, "text": GENERIC}
    if kind == "plan_step_completed":
        status = e.get("status")
        return e if status in (None, "completed") else {**e, "text": GENERIC}
    return e


MAY_CARRY = frozenset(("tool_result", "run_failed", "run_completed", "agent_handoff",
                       "agent_returned", "plan_step_completed"))
"""The event types `event` may rewrite: the others go to a customer as they are."""


def delivered(e: dict[str, Any]) -> dict[str, Any] | None:
    """An event as it is sent to a customer's stream (SSE, WebSocket): None for what
    each model was sent and answered (`Runner(inspect=True)`: the operator's only), the
    customer's copy (`event`) of one that may carry a failure's text, any other as it
    is. An event heard from another process is decoded only when it may carry one."""
    kind = e["type"]
    if kind in INSPECT_EVENTS:
        return None
    if kind not in MAY_CARRY:
        return e
    if isinstance(e, Heard):
        if not _failure_in(kind, e.text):  # sent on as the text it came as
            return e
        whole = e.whole()
    else:
        whole = e
    out = event(whole)
    return e if out is whole else out


def context(team: Team, fields: Mapping[str, Any]) -> dict[str, Any]:
    """What a customer may see of these fields of the session's typed context
    (`Team(context_public=...)`; nothing unless the team says)."""
    from ..core.typed_context import public

    return public(team.context_public, fields)


def with_context(view: EventView, team: Team) -> EventView:
    """`view` that also cuts each `context_changed` event to the fields a customer may
    see (`context`), and leaves out one that changed none of them."""
    def seen(e: dict[str, Any]) -> dict[str, Any] | None:
        if e["type"] != "context_changed":
            return view(e)
        whole = e.whole() if isinstance(e, Heard) else e
        shown = context(team, whole.get("changed") or {})
        return {**whole, "changed": shown} if shown else None

    return seen


def _failure_in(kind: str, text: str) -> bool:
    """Whether an event's JSON text (as the stores write it: compact) may carry a
    failure's text, so it must be decoded for a customer's copy."""
    if kind == "tool_result":
        return '"is_error":true' in text
    if kind == "agent_returned":
        return '"ok":false' in text
    if kind == "plan_step_completed":
        return '"status":"completed"' not in text
    if kind == "agent_handoff":
        return _ERROR_RECOVERY in text
    if kind == "run_completed":
        return _ERROR_RECOVERY in text or '"error":{' in text
    return True
