"""Edit a recorded model call and make it again: the developer's loop of the inspector.

A call `Runner(inspect=True)` recorded (`runtime.recorded`) is sent again with its system
text, its history window, its tools or its model changed (`CallEdits`), and the answer
comes back beside the recorded one (`Rerun`). It is one model call and nothing else: no
tool runs, no handoff happens, nothing is stored in the session or its event log, and it
is no turn of the session (so it is made directly on the model, not through a turn's
executor, which records a turn's effects). `runtime.answer_fork` continues a session
from that call with the answer a developer chose.

`edited_request` is the decision (a pure function of the recorded call and the edits);
`rerun` performs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.messages import ToolResult, message_from_dict
from ..core.team import Team
from ..core.tools import ToolSpec
from ..errors import HandoffsError
from ..log import fields
from ..models.base import ModelRequest, ModelResponse
from .recorded import RecordedCall, recorded_call

if TYPE_CHECKING:
    from .runner import Runner

log = logging.getLogger("handoffs.runtime.rerun")


@dataclass(slots=True, frozen=True)
class CallEdits:
    """What to change in a recorded call before making it again (None: as recorded)."""

    system: str | None = None
    """The system text instead of the recorded one."""
    window: int | None = None
    """How many of the recorded messages to send, the newest ones (0: none). A window
    that would start with a tool result starts after it (a provider refuses a result
    whose call it was not sent)."""
    tools: Sequence[str] | None = None
    """The names of the recorded tools to offer (the others are left out); a tool choice
    naming one left out falls back to the provider's default."""
    model: str | None = None
    """A "provider:name" model string (`handoffs.models.get_model`) instead of the
    agent's own model."""


@dataclass(slots=True, frozen=True)
class Rerun:
    """A recorded call made again, and what came back."""

    call: RecordedCall
    """The call as recorded (its answer is `call.response`)."""
    request: ModelRequest
    """What was sent this time."""
    model: str
    """Which model answered: the model string given, or the agent's own model's name."""
    response: ModelResponse | None
    """The answer (None when the call failed)."""
    error: tuple[str, str] | None
    """The failure's code and message (None when it answered)."""
    latency: float
    """Seconds the call took."""

    def to_dict(self) -> dict[str, Any]:
        """The rerun as JSON: the call's coordinates, what was sent, and the answer."""
        r = self.response
        req = self.request
        sent = {"system": req.system, "messages": [m.to_dict() for m in req.messages],
                "tools": [t.name for t in req.tools], "tool_choice": req.tool_choice}
        out: dict[str, Any] = {
            "turn": self.call.turn, "call": self.call.call, "line": self.call.line,
            "agent": self.call.agent, "model": self.model, "latency": self.latency,
            "request": sent, "recorded": self.call.response}
        if r is None:
            code, message = self.error or ("error", "")
            out["response"] = {"error": {"code": code, "message": message}}
        else:
            out["response"] = {
                "text": r.text, "model": r.model,
                "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                               for c in r.tool_calls],
                "usage": r.usage.to_dict() if r.usage is not None else None}
        return out


def edited_request(team: Team, call: RecordedCall, edits: CallEdits) -> ModelRequest:
    """The request `call` made, with `edits` applied (`content_not_captured` when its
    texts were not recorded; `invalid_argument` for a window or tool it did not have)."""
    if call.redacted:
        raise HandoffsError(
            "This call's texts were not recorded (the server does not capture content: "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT), so it cannot be sent "
            "again.", code="content_not_captured")
    rec = call.request
    messages = [message_from_dict(m) for m in rec.get("messages", ())]
    if edits.window is not None:
        if not 0 <= edits.window <= len(messages):
            raise HandoffsError(f"The call sent {len(messages)} messages; the window is 0 "
                                f"to {len(messages)}, not {edits.window}.",
                                code="invalid_argument")
        messages = messages[len(messages) - edits.window:]
        while messages and isinstance(messages[0], ToolResult):
            messages = messages[1:]
    offered = [ToolSpec(t["name"], t.get("description", ""), t.get("parameters", {}))
               for t in rec.get("tools", ())]
    choice = rec.get("tool_choice")
    if edits.tools is not None:
        names = {t.name for t in offered}
        unknown = [n for n in edits.tools if n not in names]
        if unknown:
            raise HandoffsError(f"The call did not offer {', '.join(map(repr, unknown))}; "
                                f"it offered {', '.join(sorted(names)) or 'no tools'}.",
                                code="invalid_argument")
        keep = set(edits.tools)
        offered = [t for t in offered if t.name in keep]
        if choice not in (None, "auto", "required", "none") and choice not in keep:
            choice = None
        if choice == "required" and not offered:
            choice = None
    plan = team.plan(call.agent) if call.agent in team else None
    return ModelRequest(call.agent, rec.get("system", "") if edits.system is None
                        else edits.system, messages, offered, choice,
                        dict(rec.get("settings") or {}),
                        plan.output if plan is not None else None,
                        plan.parallel_tool_calls if plan is not None else None)


async def rerun(runner: Runner, session_id: str, turn: int, call: int, edits: CallEdits,
                line: str = "") -> Rerun:
    """Make recorded call `call` of turn `turn` again with `edits` (see the module): on
    the model `edits.model` names, else on the agent's own model. A model that fails is
    an answer too (`Rerun.error`); nothing of the session changes."""
    found = await recorded_call(runner.store, session_id, turn, call, line)
    request = edited_request(runner.team, found, edits)
    if edits.model:
        from ..models.registry import get_model

        model = get_model(edits.model)
        label = edits.model
    else:
        own = runner.model_for(found.agent)
        if own is None:
            raise HandoffsError(f"{found.agent!r} is a human agent: it has no model to "
                                "call; name one.", code="no_model")
        model = own
        label = getattr(own, "name", None) or type(own).__name__
    started = time.perf_counter()
    try:
        response = await model.complete(request)
    except Exception as exc:  # the model's failure is the answer the developer reads
        latency = time.perf_counter() - started
        code = exc.code if isinstance(exc, HandoffsError) else type(exc).__name__
        log.warning("rerun of call %d of turn %d on %s failed (%s)", call, turn, label,
                    code, exc_info=True, extra=fields(session_id, turn, found.agent))
        return Rerun(found, request, label, None, (code, str(exc)), latency)
    latency = time.perf_counter() - started
    log.info("call %d of turn %d made again on %s", call, turn, label,
             extra=fields(session_id, turn, found.agent))
    return Rerun(found, request, label, response, None, latency)
