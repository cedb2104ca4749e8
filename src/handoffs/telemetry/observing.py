"""What telemetry reads of the runtime and of its own observer, as protocols: a turn
(`ObservedTurn`, which `runtime.state.Turn` is), its runner (`ObservedRunner`) and the
observer the span modules (`chat`, `handoff_spans`, `links`, `tool_spans`, `frames`)
work for (`Observing`, which `observer.Observer` is).

So imports point one way: the runtime imports telemetry, the observer imports its span
modules, and none of them imports back. Imported for type checking only: it costs
`import handoffs` nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..core.session import SessionState
    from ..core.team import Team
    from .metrics import Instruments


class Options(Protocol):
    """What the observer reads of a runner's `config.Telemetry`."""

    @property
    def capture_content(self) -> bool: ...

    @property
    def workflow_name(self) -> str | None: ...


class ObservedRunner(Protocol):
    """The runner of an observed turn (`runtime.state.host.Host`)."""

    @property
    def team(self) -> Team: ...

    @property
    def telemetry(self) -> Any:
        """Its `config.Telemetry` (None: not traced nor measured)."""
        ...

    @property
    def mcp_hub(self) -> Any:
        """Its MCP connections once made (`mcp.hub.Hub`), else None."""
        ...


class ObservedTurn(Protocol):
    """A turn as its observer sees it (`runtime.state.Turn`)."""

    @property
    def state(self) -> SessionState: ...

    @property
    def team(self) -> Team: ...

    @property
    def runner(self) -> ObservedRunner: ...

    models: Any
    """Each agent's model by name; the observer wraps it (`chat.TracedModels`)."""
    sink: Any
    """Where the turn's events go; the observer puts itself in front."""
    obs: Any
    """The turn's observer, once it has one."""


class Observing(Protocol):
    """The observer of one turn, as its span modules use it (`observer.Observer`)."""

    t: ObservedTurn
    tracer: Any
    metrics: Instruments | None
    capture: bool
    """Whether content (messages, reasons) goes on spans."""
    sid: str
    root: Any
    root_ctx: Any
    started: bool
    follows: Any
    resuming: tuple[str, str] | None
    delegations: dict[str, Any]
    latency: dict[str, tuple[float, str, str, str]]
    frames: list[Any]
    tool_t0: dict[str, float]

    def current(self) -> Any:
        """The `frames.Frame` the running task works for (None: none yet)."""
        ...

    def context(self) -> Any: ...

    def start(self, name: str, parent: Any, attributes: dict[str, Any],
              kind: Any = ...) -> Any: ...

    def content(self, value: Any) -> str: ...

    def end_frame(self, f: Any, error: str | None = None) -> None: ...
