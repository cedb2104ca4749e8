"""Recording what each agent's model saw: `Runner(inspect=True)`.

With inspection on, every model call of a turn becomes two events, stored in the
session's event log like every other event: `model_request` (the exact request: the
system text, the agent's view of the transcript after its route's filter with the
handoff's note, the tools offered, the tool choice, where the view sits in the transcript, and
the session's shared memory at that moment) and `model_response` (the raw response:
text, tool calls, tokens, the provider's model name, the latency, or the error). The
inspector page (`/inspect`) shows them beside the transcript, so a handoff can be read as
the view before and after the filter.

Content (texts, tool arguments, shared memory) follows the telemetry privacy switch
(`Telemetry(capture_content=...)`, else `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`):
without it every text is replaced by its length, and what stays is the structure (which
messages, whose, which tools, tokens, latency). The server shows these events to the
operator key only.

The loop's one hook (`loop._steps`) costs one attribute check when inspection is off.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any

from ...errors import HandoffsError
from ...models.base import ModelRequest, ModelResponse
from ...telemetry.config import CAPTURE_ENV

if TYPE_CHECKING:
    from ...core import event_data as ed
    from ..state import Leg, Turn

INSPECT_EVENTS = frozenset(("model_request", "model_response"))
"""The event types inspection adds (operator-only on the server)."""


class Inspector:
    """Emits `model_request` / `model_response` around each model call of a runner."""

    __slots__ = ("content",)

    def __init__(self, content: bool) -> None:
        self.content = content
        """Whether texts are recorded as they are (else replaced by their length)."""

    async def watch(self, t: Turn, leg: Leg, request: ModelRequest,
                    call: Awaitable[ModelResponse]) -> ModelResponse:
        """Await the model `call` for `request`, emitting the request before and the
        response (or the error, re-raised) after."""
        n = t.steps
        t.emit("model_request", self.request(t, leg, request, n))
        started = time.perf_counter()
        try:
            response = await call
        except BaseException as exc:
            code = exc.code if isinstance(exc, HandoffsError) else type(exc).__name__
            t.emit("model_response", {
                "agent": request.agent, "call": n, "latency": time.perf_counter() - started,
                "error": {"code": code, "message": self.text(str(exc))}})
            raise
        latency = time.perf_counter() - started
        usage = response.usage
        t.emit("model_response", {
            "agent": request.agent, "call": n, "latency": latency,
            "text": self.text(response.text),
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": self.text(c.arguments)}
                           for c in response.tool_calls],
            "usage": usage.to_dict() if usage is not None else None,
            "model": response.model, "redacted": not self.content})
        return response

    def request(self, t: Turn, leg: Leg, request: ModelRequest, n: int) -> ed.ModelRequest:
        """The `model_request` event's fields."""
        state = t.state
        view: dict[str, Any] = {"transcript": len(state.messages)}
        if leg.main:
            view.update(state.view.to_dict())
        else:
            view["delegation"] = leg.line
        return {
            "agent": request.agent, "call": n, "line": leg.line,
            "system": self.text(request.system),
            "messages": [self.message(m.to_dict()) for m in request.messages],
            "tools": [{"name": s.name, "description": s.description,
                       "parameters": s.parameters} for s in request.tools],
            "tool_choice": request.tool_choice,
            "settings": dict(request.settings),
            "view": view,
            "shared": self.shared(state.shared),
            "redacted": not self.content,
        }

    def text(self, value: str) -> str:
        if self.content or not value:
            return value
        return f"[redacted: {len(value)} characters]"

    def message(self, d: dict[str, Any]) -> dict[str, Any]:
        if self.content:
            return d
        d["text"] = self.text(d.get("text", ""))
        for c in d.get("tool_calls", ()):
            c["arguments"] = self.text(c["arguments"])
        return d

    def shared(self, shared: Mapping[str, Any]) -> Any:
        """A copy of shared memory as it is now (later changes do not reach the event)."""
        if not self.content:
            return {k: "[redacted]" for k in shared}
        return json.loads(json.dumps(shared, ensure_ascii=False, default=str))


def inspector(option: bool, telemetry: Any) -> Inspector | None:
    """`Runner(inspect=...)`: None when off; content as the telemetry switch says."""
    if not isinstance(option, bool):
        raise HandoffsError(f"Runner(inspect=...) is True or False, not {option!r}.",
                            code="invalid_argument")
    if not option:
        return None
    if telemetry is not None:
        return Inspector(bool(telemetry.capture_content))
    return Inspector(os.environ.get(CAPTURE_ENV, "").strip().lower() == "true")
