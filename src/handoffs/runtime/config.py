"""A runner's options as one frozen value (`RunnerConfig`).

Not imported by `import handoffs` nor by the runner's module: a `Runner` imports it when
it is built (a dataclass costs its class's making at import).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.context import RunContext
    from ..core.handoff import HistoryMode
    from ..telemetry.config import Telemetry


@dataclass(frozen=True, slots=True)
class RunnerConfig:
    """A runner's options, as `Runner(...)` was given them: the one value a runner built
    from another (`Runner.from_config`: a replay's, a Temporal workflow's) is made of, so
    an option added here reaches every such runner. `runner.config`; the runner's
    attributes of the same names read and write it."""

    max_steps: int = 20
    """Model calls one turn may make."""
    max_message_chars: int = 1_000_000
    """The longest user's or operator's message (longer: `message_too_large`)."""
    turn_timeout: float | None = None
    """Seconds a whole turn may take (None: no limit)."""
    history: HistoryMode = "own_tools"
    """The history view of routes that set none (`Handoff(history=None)`)."""
    on_max_steps: Callable[[RunContext[Any]], Any] | None = None
    """Makes the output of a turn that reached `max_steps` (None: the turn fails)."""
    inspect: bool = False
    """Record each model call's request and response as events (`inspect=True`)."""
    telemetry: Telemetry | bool | None = None
    """As given to `Runner(telemetry=...)`: None follows the application's providers,
    False is off (`telemetry.config.resolve`)."""

    def options(self) -> dict[str, Any]:
        """The options as `Runner(...)`'s keyword arguments of the same names."""
        return {f.name: getattr(self, f.name) for f in fields(self)}
