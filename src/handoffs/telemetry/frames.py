"""Where a traced turn is: the activation each asyncio task works for."""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from opentelemetry import trace

if TYPE_CHECKING:
    from .chat import ModelInfo
    from .observing import Observing


class Frame:
    """One activation of an agent on a line of work, or (`span` None) the start of a
    delegation's line before its first activation."""

    __slots__ = ("agent", "asks", "caller", "ctx", "ended", "error", "input_tokens", "line",
                 "model", "obs", "output_tokens", "parent", "span", "start", "tools")

    def __init__(self, obs: Observing, agent: str, line: str | None, parent: Any,
                 span: Any = None, caller: Frame | None = None) -> None:
        self.obs = obs
        self.agent = agent
        self.line = line
        """The delegation record this line works for (None: the main line)."""
        self.parent = parent
        """The context activations of this line start in (the turn's, or the delegation's)."""
        self.span = span
        self.ctx = trace.set_span_in_context(span) if span is not None else parent
        self.caller = caller
        """The frame that was current when this delegation's line started in the same task
        (a delegate continued after an approval): current again when the delegate answers."""
        self.start = time.perf_counter()
        self.tools: dict[str, Any] = {}
        """Open `execute_tool` spans by call id."""
        self.asks: dict[str, Any] = {}
        """Open handoff-request spans by call id."""
        self.ended = False
        self.error: str | None = None
        """Why this activation failed, once known (a guardrail trip, a model error)."""
        self.model: ModelInfo | None = None
        """The model this activation called (its provider and name go on the span)."""
        self.input_tokens = 0
        self.output_tokens = 0
        """Token usage of this activation's model calls, where the model reported it."""


FRAME: ContextVar[Frame | None] = ContextVar("handoffs_telemetry_frame", default=None)
"""The activation the running task works for. Each delegation (and each concurrent tool
call) runs in its own asyncio task, whose context is a copy: concurrent delegates never
see each other's activation, and a delegate's never leaks back to its caller."""
