"""What a turn needs of the outside world, as protocols: the runner's settings and parts
(`Host`, which the `Runner` is), and the effects executor (`Executor`), the seam through
which every clock read, id, model call, tool call and remote agent's call goes.

The state layer names them here, so the layers above (decisions, effects, driver, runner)
all point down at the same contract: `runtime.effects` implements `Executor` in process
(`InProcess`), and an executor for a durable-execution engine (`handoffs.temporal`) makes
each model and tool call an activity of a workflow that runs the same decisions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from ...core.context import RunContext
    from ...core.events import Event
    from ...core.handoff import HandoffRecord
    from ...core.remote import RemoteAgent, RemoteReply, RemoteRequest
    from ...core.team import Team
    from ...core.tools import Tool, ToolSpec
    from ...models.base import Model, ModelRequest, ModelResponse
    from ...stores.base import SessionStore
    from ...stores.features import StoreFeatures
    from ..config import RunnerConfig
    from .result import RunResult

T = TypeVar("T")


class Executor(Protocol):
    """Performs a turn's effects. Everything a turn does that is not a pure function of
    its state goes through here: the clock, new ids, timers, a model call (streamed to the
    turn's reader when it streams), a summariser's model call, a tool call (an MCP
    server's tools included) and a remote agent's call; `t` is the `state.turn.Turn` they belong to.
    The in-process executor calls them directly; a durable one records each so a replay
    returns the same answers."""

    def now(self) -> float:
        """The current time, in seconds since the epoch (events and records)."""
        ...

    def new_id(self) -> str:
        """A new id, unique across processes (records, calls)."""
        ...

    def model(self, t: Any, model: Model, request: ModelRequest) -> Awaitable[ModelResponse]:
        """One model call for the turn: the whole response; when the turn streams, its
        text goes to the turn's reader as `text_delta` events as it comes."""
        ...

    def tool(self, t: Any, tool: Tool, ctx: RunContext, args: Any,
             call_id: str) -> Awaitable[Any]:
        """Run one tool call with validated arguments; its return value, or its exception
        raised."""
        ...

    def summary(self, t: Any, summarizer: Any, fallback_model: Model | None,
                request: ModelRequest, target: str) -> Awaitable[ModelResponse]:
        """One summariser's model call (a `history="summary"` handoff from
        `request.agent`'s source to `target`, or a session transfer when `t` is None):
        the model is `summarizer.model`, else `fallback_model` (`effects.summary`).
        Never streamed: a summary is not the answer."""
        ...

    def mcp_offer(self, t: Any, agent: Any,
                  taken: Iterable[str]) -> Awaitable[tuple[tuple[ToolSpec, ...], str]]:
        """The agent's MCP servers' tools now (listed, connecting first when needed), and
        a sentence for the model naming the servers that are down ("" when none is):
        `mcp.hub.Hub.offer`. A call of one of them is a `tool` call."""
        ...

    def within(self, call: Awaitable[T], seconds: float) -> Awaitable[T]:
        """`call`'s value, or `TimeoutError` once `seconds` passed (`call` is cancelled
        then): the timer of an agent's, a delegation's and a turn's time limit."""
        ...

    def remote(self, t: Any, agent: RemoteAgent,
               request: RemoteRequest) -> Awaitable[RemoteReply]:
        """One message to a remote agent over A2A and its reply (the task's state and
        text); when the turn streams, its text goes to the turn's reader as `text_delta`
        events as it comes. Raises `HandoffsError` with `remote_unreachable`,
        `remote_timeout`, `remote_rejected` or `remote_failed`."""
        ...


class Dispatcher(Protocol):
    """Runs whole turns elsewhere: an executor whose `dispatcher` is one (as
    `handoffs.temporal.TemporalExecutor`) gets the runner's turns, decisions and picks
    instead of the driver of this process; the runner passes itself as `runner`."""

    def run(self, runner: Any, session_id: str, text: str, channel: str | None,
            context: Any, timeout: float | None) -> Awaitable[RunResult]: ...

    def stream(self, runner: Any, session_id: str, text: str, channel: str | None,
               context: Any, timeout: float | None) -> AsyncIterator[Event]: ...

    def resume(self, runner: Any, session_id: str,
               context: Any) -> Awaitable[RunResult | None]: ...

    def decide(self, runner: Any, session_id: str, call_id: str, approved: bool,
               reason: str, context: Any) -> Awaitable[RunResult]: ...

    def select_agent(self, runner: Any, session_id: str,
                     name: str) -> Awaitable[HandoffRecord]: ...

    def reply_as_human(self, runner: Any, session_id: str, text: str,
                       handoff_to: str | None) -> Awaitable[RunResult]: ...

    def run_plan(self, runner: Any, session_id: str, steps: Any,
                 context: Any) -> Awaitable[RunResult]: ...

    def cancel(self, runner: Any, session_id: str) -> bool:
        """Stop the turn this process sent on the session, if any (True if there was)."""
        ...


class Host(Protocol):
    """What the driver and a turn need of the runner that runs them (the `Runner` is one):
    its team, store, limits and defaults, its models by agent, and its executor."""

    team: Team
    model: Any
    """The default model of agents without their own (`Runner(model=...)`)."""
    store: SessionStore
    executor: Executor

    @property
    def store_features(self) -> StoreFeatures:
        """What the store offers beyond `SessionStore`, read once per store."""
        ...

    @property
    def config(self) -> RunnerConfig:
        """Its options as one value (the limits and defaults below, as they are now)."""
        ...

    max_steps: int
    max_message_chars: int
    turn_timeout: float | None
    history: Any
    """The history view of routes that set none (`Runner(history=...)`)."""
    on_max_steps: Any
    telemetry: Any
    inspector: Any
    running_turns: dict[str, Any]
    """The turns it runs now, by session id (`state.turn.Turn`)."""
    detached_turns: set[Any]
    """Streamed turns whose reader stopped reading, kept until they finish."""
    mcp_hub: Any
    """Its MCP connections once made (`mcp.hub.Hub`), else None."""

    @property
    def agent_models(self) -> dict[str, Model | None]:
        """Each agent's model, resolved when first asked for."""
        ...

    @classmethod
    def from_config(cls, team: Team, config: RunnerConfig, *, model: Any = None,
                    store: Any = None, executor: Executor | None = None) -> Host:
        """Another runner of the same class with `config`'s options (`Runner.from_config`)."""
        ...

    async def run(self, session_id: str, text: str) -> RunResult:
        """Run one user turn (`Runner.run`): what a replay sends each message again with."""
        ...

    def model_for(self, name: str) -> Model | None:
        """The model agent `name` uses (None for a human agent)."""
        ...

    @property
    def mcp(self) -> Any:
        """The runner's MCP connections (`mcp.hub.Hub`)."""
        ...
