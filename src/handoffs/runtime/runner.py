"""The runner: the public API of the runtime, and nothing else.

Each method locks the session, and hands the work to the module that holds its concept:
`turn` (one user turn around `loop`, the main line and one agent's activation),
`handoffs` (asks → policy → records → moves), `delegation`, `tools`, `human`, `plans`,
`transfer`. `docs/design.md` maps DESIGN.md's algorithm onto these modules.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.agent import Agent
from ..core.context import RunContext
from ..core.events import Event
from ..core.handoff import HandoffRecord, HistoryMode
from ..core.plan import PlanStep
from ..core.session import SessionState
from ..core.team import Team
from ..errors import HandoffsError
from ..models.base import Model
from ..stores.base import SessionStore
from ..stores.opening import open_store
from ..telemetry.config import Telemetry, resolve
from .driver.feed import fed, stream_turn
from .driver.turn import run_turn
from .effects.executor import IN_PROCESS
from .effects.inspector import Inspector, inspector
from .going_back import GoingBack
from .settings import (
    AgentModels,
    check_runner,
    check_timeout,
    in_other_thread,
    model_spec,
    no_running_loop,
    resolve_model,
    routed,
)
from .state import Turn
from .state.host import Dispatcher, Executor
from .state.result import RunResult

if TYPE_CHECKING:
    from ..core.idempotency import IdempotencyKey
    from ..core.tools import ToolSpec
    from ..mcp.hub import Hub
    from ..stores.features import StoreFeatures
    from .config import RunnerConfig
    from .replay import Replay


class Runner(GoingBack):
    """Runs a team's conversations: `run` one user turn, `stream` its events, move agents.

        runner = Runner(team, model=ScriptedModel([...]))
        result = await runner.run("session-1", "I was charged twice")

    `model` is the default for agents without their own (`Agent(model=...)`); a
    "provider:name" string, a `Model`, or None for `HANDOFFS_MODEL`. Models are resolved
    when an agent first needs one: a runner with no model at all can still serve
    `reply_as_human`, `select_agent` and reads. `store` is a `SessionStore` or a URL
    (`memory://`, `sqlite:///path.db`, `postgresql://...`); None keeps sessions in memory.
    `max_steps` bounds the model calls of one turn. `max_message_chars` bounds a user's
    or operator's message (longer ones are refused with `message_too_large` before
    anything is stored). `telemetry`: None (default) traces and measures turns when the
    application configured OpenTelemetry providers, and costs nothing when it did not;
    a `Telemetry(...)` names providers or opts in to content; False turns it off.

    Turn-wide limits and defaults:
    `turn_timeout`: seconds a whole turn may take (None: no limit; `run(timeout=...)`
    overrides it per turn). The limit is enforced around every activation of the main
    line, so the turn stops within it; it then fails with code `timeout` and, like any
    failed agent, goes once to the team's `fallback`, which gets what is left of the
    limit but at least a grace of a quarter of it (a turn ends within 1.25 x the limit).
    `history`: the history view of routes that do not set `Handoff.history` (None:
    `own_tools`, each agent sees the conversation and only its own tool traffic; `"full"`
    gives every route's target every earlier tool call and result, the earlier default).
    `on_max_steps`: called (sync or async) with the `RunContext` when a turn reaches
    `max_steps`; its text is the turn's output and the turn is COMPLETED (the
    `max_steps_reached` event says so). A handler that raises fails the turn with
    `max_steps`, the exception kept.
    `inspect`: record every model call's exact request (system text, the agent's view of
    the transcript, tools) and raw response (tokens, latency) as `model_request` /
    `model_response` events in the session's event log, for the inspector page
    (`/inspect`); texts are kept only when telemetry captures content
    (`runtime.effects.inspector`). Off by default; off, it costs one attribute check per
    call.
    `executor`: what performs each turn's effects, the clock, ids, model and tool calls
    (`state.host.Executor`); None runs them in this process. A durable one
    (`handoffs.temporal`) makes each model and tool call an activity.
    """

    def __init__(
        self,
        team: Team,
        model: Model | str | None = None,
        store: SessionStore | str | None = None,
        max_steps: int = 20,
        max_message_chars: int = 1_000_000,
        telemetry: Telemetry | bool | None = None,
        turn_timeout: float | None = None,
        history: HistoryMode | None = None,
        on_max_steps: Callable[[RunContext[Any]], Any] | None = None,
        inspect: bool = False,
        executor: Executor | None = None,
    ) -> None:
        from .config import RunnerConfig  # not on the import path (`runtime.config`)

        config = RunnerConfig(max_steps, max_message_chars, turn_timeout,
                              history if history is not None else "own_tools",
                              on_max_steps, inspect, telemetry)
        check_runner(team, config)
        self._apply(config)
        self.team = team
        self.model = model
        self.store = open_store(store)
        self._features: tuple[SessionStore, StoreFeatures] | None = None
        self.telemetry: Telemetry | None = resolve(telemetry)
        """Checked once per turn (`handoffs.telemetry`); None: never traced nor measured."""
        self.inspector: Inspector | None = inspector(inspect, self.telemetry)
        """Records each model call's request and response as events (`inspect=True`)."""
        self.executor: Executor = executor if executor is not None else IN_PROCESS
        """Performs every turn's effects: the clock, ids, model and tool calls
        (`state.host.Executor`; in this process unless given another)."""
        self._dispatch: Dispatcher | None = getattr(self.executor, "dispatcher", None)
        """Runs whole turns elsewhere, when the executor does (`handoffs.temporal`)."""
        self.agent_models = AgentModels(lambda name: self._resolve_model(self.team[name]))
        """Each agent's model by name, resolved when first needed (`model_for`)."""
        for agent in team.agents:  # a model that is set is checked now, a missing one
            if self._spec(agent) is not None:  # only when that agent must answer
                self.agent_models[agent.name] = self._resolve_model(agent)
        self.running_turns: dict[str, Turn] = {}
        """The turns this runner is running now, by session id (for `cancel`)."""
        self.detached_turns: set[asyncio.Future[RunResult]] = set()
        """Streamed turns whose consumer stopped reading: kept alive until they finish."""
        self._detached = self.detached_turns  # the name tests used before
        self.mcp_hub: Hub | None = None
        """The MCP connections once an agent's server was first used (else None; `mcp`
        makes them)."""

    store: SessionStore
    """Where sessions are kept (`Runner(store=...)`); may be replaced."""

    @property
    def store_features(self) -> StoreFeatures:
        """What the store offers beyond `SessionStore` (its event log, turn marks,
        readiness probe), read once per store (again when `store` is replaced): no turn
        probes the store for a method."""
        known = self._features
        if known is None or known[0] is not self.store:
            from ..stores.features import StoreFeatures

            known = self._features = (self.store, StoreFeatures.of(self.store))
        return known[1]

    @classmethod
    def from_config(cls, team: Team, config: RunnerConfig, *,
                    model: Model | str | None = None, store: SessionStore | str | None = None,
                    executor: Executor | None = None) -> Runner:
        """A runner on `team` with `config`'s options (another runner's `config`, say):
        how a replay and a Temporal workflow build theirs, so no option is left behind."""
        return cls(team, model, store, executor=executor, **config.options())

    max_steps: int
    """Model calls one turn may make."""
    max_message_chars: int
    """The longest message a user or operator may send."""
    turn_timeout: float | None
    """Seconds a whole turn may take by default (None: no limit)."""
    history: HistoryMode
    """The history view of routes that set none (`Handoff(history=None)`)."""
    on_max_steps: Callable[[RunContext[Any]], Any] | None
    """Makes the output of a turn that reached `max_steps` (None: the turn fails)."""

    @property
    def config(self) -> RunnerConfig:
        """The runner's options as one value, as they are now (`from_config` builds
        another runner of it). Plain attributes hold them, which a turn reads for free;
        setting `config` sets them all."""
        from .config import RunnerConfig

        return RunnerConfig(self.max_steps, self.max_message_chars, self.turn_timeout,
                            self.history, self.on_max_steps, self._inspect,
                            self._telemetry_option)

    @config.setter
    def config(self, config: RunnerConfig) -> None:
        self._apply(config)

    def _apply(self, config: RunnerConfig) -> None:
        self.max_steps = config.max_steps
        self.max_message_chars = config.max_message_chars
        self.turn_timeout = config.turn_timeout
        self.history = config.history
        self.on_max_steps = config.on_max_steps
        self._inspect = config.inspect
        self._telemetry_option = config.telemetry

    def _client(self, specs: Sequence[ToolSpec | Mapping[str, Any]]) -> dict[str, Any]:
        """The client's tools, checked (`core.client_tools`); refused under an executor
        that runs turns elsewhere (Temporal), which does not carry them."""
        if self._dispatch is not None:
            raise HandoffsError("Client tools are not supported under Temporal yet: run "
                                "the turn without them, or in process.",
                                code="client_tools_unsupported")
        from ..core.client_tools import client_tools

        return client_tools(self.team, specs)

    def _key(self, key: str | IdempotencyKey | None) -> IdempotencyKey | None:
        """A caller's idempotency key, checked; refused under an executor that runs
        turns elsewhere (Temporal), which does not record keys."""
        if key is None:
            return None
        if self._dispatch is not None:
            raise _unsupported()
        from ..core.idempotency import as_key

        return as_key(key)

    def model_for(self, name: str) -> Model | None:
        """The model agent `name` uses (None for a human agent); `no_model` if none is set."""
        return self.agent_models[name]

    def _spec(self, agent: Agent) -> Any:
        return model_spec(agent, self.model)

    def _resolve_model(self, agent: Agent) -> Model | None:
        return routed(resolve_model(agent, self.model), agent, self.team)

    # -- turns ---------------------------------------------------------------------------

    async def run(
        self,
        session_id: str,
        text: str,
        channel: str | None = None,
        context: Any = None,
        timeout: float | None = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        idempotency_key: str | IdempotencyKey | None = None,
        client_tools: Sequence[ToolSpec | Mapping[str, Any]] | None = None,
    ) -> RunResult:
        """Run one user turn on the session and return its result.

        The active agent of the session receives the message; if a handoff happens the
        target answers in the same turn (unless the route says `next_turn`), and the
        session remembers it as the active agent for the next message. `context` reaches
        tools, instructions, guardrails and hooks as `ctx.context` (type it with
        `RunContext[YourType]`); `timeout` bounds this turn (seconds, counted from this
        call; None: the runner's `turn_timeout`). `on_event` is called with each event
        as it happens, the ones `stream` yields in the same order (the last once the
        turn is stored), inside the turn: it must return at once and not raise. It costs
        a turn less than `stream` (no task, no generator): what a server fanning events
        out uses.

        `idempotency_key`: the client's key for this message (a UUID it reuses when it
        retries). A second call with the same key on the same session stores and runs
        nothing: it returns the first call's result (its stored events in
        `result.events`, `on_event` called with them), waiting for the first if it still
        runs, across processes on one store and after a restart; a first turn that died
        is resumed. The key is recorded with the message, atomically; keys are kept 24
        hours (`core.idempotency`). The same key with different text is refused
        (`idempotency_key_reused`).

        `client_tools`: tools the client runs (AG-UI's frontend tools; each a `ToolSpec`
        or a dict with `name`, `description`, `parameters`), offered for this turn to
        the agents that answer the user. A call of one never runs here: the turn pauses
        (`waiting_for_approval`, the call marked the client's in `session.pending`)
        until the client sends its result with `submit_tool_result`. A name of one of
        the team's tools or handoffs is refused (`tool_name_taken`); under Temporal the
        argument is refused (`client_tools_unsupported`).
        """
        check_timeout(timeout, "timeout")
        if client_tools:
            return await run_turn(self, session_id, text, channel, context, on_event,
                                  timeout, None, self._key(idempotency_key),
                                  self._client(client_tools))
        if idempotency_key is not None:
            return await run_turn(self, session_id, text, channel, context, on_event,
                                  timeout, None, self._key(idempotency_key))
        if self._dispatch is not None:
            if on_event is not None:
                return await fed(self._dispatch.stream(self, session_id, text, channel,
                                                       context, timeout), on_event)
            return await self._dispatch.run(self, session_id, text, channel, context, timeout)
        return await run_turn(self, session_id, text, channel, context, on_event, timeout)

    async def resume(self, session_id: str, context: Any = None) -> RunResult | None:
        """Answer the message of a turn that a crash or a cancel interrupted.

        Returns None when nothing is pending. Not needed for correctness: the next
        `run` on the session answers the interrupted message together with the new one
        (or resumes it, when the same text is sent again); use `resume` to answer it
        without waiting for the user. A response that was continuing after an approval
        when its turn died is settled first: its calls are not run again (their outcome
        is unknown, the model is told so).
        """
        if self._dispatch is not None:
            return await self._dispatch.resume(self, session_id, context)
        from .driver.turn import resume

        return await resume(self, session_id, context, None)

    async def approve(self, session_id: str, call_id: str, context: Any = None, *,
                      idempotency_key: str | IdempotencyKey | None = None) -> RunResult:
        """Approve a tool call that waits for a person (`@tool(needs_approval=...)`).

        When it was the last undecided call of its response, the same turn goes on (the
        call runs, the agent continues) and its result is returned; otherwise the result
        is still `waiting_for_approval`. Refused with `no_pending_approval` when the call
        does not wait (already decided, or unknown). `idempotency_key`: as `run`'s; a
        retry of the decision gets its first outcome instead of `no_pending_approval`."""
        key = self._key(idempotency_key)
        if self._dispatch is not None:
            return await self._dispatch.decide(self, session_id, call_id, True, "", context)
        from .driver.approval import decide

        return await decide(self, session_id, call_id, True, "", context, key)

    async def reject(self, session_id: str, call_id: str, reason: str = "",
                     context: Any = None, *,
                     idempotency_key: str | IdempotencyKey | None = None) -> RunResult:
        """Reject a waiting tool call: it does not run, and the agent reads that a person
        did not approve it (with `reason`) as the call's result. Otherwise as `approve`."""
        key = self._key(idempotency_key)
        if self._dispatch is not None:
            return await self._dispatch.decide(self, session_id, call_id, False, reason,
                                             context)
        from .driver.approval import decide

        return await decide(self, session_id, call_id, False, reason, context, key)

    async def submit_tool_result(self, session_id: str, call_id: str, content: str,
                                 is_error: bool = False, context: Any = None, *,
                                 idempotency_key: str | IdempotencyKey | None = None
                                 ) -> RunResult:
        """The client's result of a call of one of its tools (`run(client_tools=...)`):
        stored as the call's result, the model reads it as the tool's answer. When it
        was the last call its response waited for, the same turn goes on and its result
        is returned (otherwise still `waiting_for_approval`). Refused with
        `no_pending_tool_call` when the call does not wait for a client's result
        (unknown, answered already, or waiting for a person's approval instead).
        `idempotency_key`: as `approve`'s; a retry gets the first outcome."""
        if self._dispatch is not None:
            raise HandoffsError("Client tools are not supported under Temporal yet.",
                                code="client_tools_unsupported")
        from .driver.approval import decide

        key = self._key(idempotency_key)
        return await decide(self, session_id, call_id, True, "", context, key,
                            (content, bool(is_error)))

    def cancel(self, session_id: str) -> bool:
        """Stop the turn this runner is running on the session, if any (True if there was).

        The turn ends FAILED with code `cancelled` and is persisted with what it did so
        far; the user's message stays in the transcript and is not answered again (the
        session is idle, not interrupted). `run` returns that result; a `stream` ends with
        its `run_failed` event. Only turns of this process are seen (under Temporal:
        turns this process sent, stopped by a signal to the session's workflow).
        """
        if self._dispatch is not None:
            return bool(self._dispatch.cancel(self, session_id))
        t = self.running_turns.get(session_id)
        owner = t.owner if t is not None else None
        if t is None or owner is None or t.stopping or owner.done():
            return False
        loop = owner.get_loop()
        try:
            if owner is asyncio.current_task(loop):  # the turn cannot stop itself
                return False
        except RuntimeError:  # called from outside the loop's thread
            pass
        t.stopping = True
        if loop.is_running() and in_other_thread(loop):
            loop.call_soon_threadsafe(owner.cancel)
        else:
            owner.cancel()
        return True

    def live_shared(self, session_id: str) -> dict[str, Any] | None:
        """A copy of the shared memory of the turn this runner is running on the session
        now, as its tools have left it so far (None: no turn of this process runs
        there). What a protocol streams as the state changes mid-turn."""
        t = self.running_turns.get(session_id)
        if t is None:
            return None
        return copy.deepcopy(t.state.shared)

    @property
    def mcp(self) -> Hub:
        """The runner's MCP connections (`Agent(mcp=[...])`), made on first use."""
        if self.mcp_hub is None:
            from ..mcp.hub import Hub

            self.mcp_hub = Hub()
        return self.mcp_hub

    async def aclose(self) -> None:
        """Let streamed turns finish, then close the MCP connections, each from the task
        that opened it. `async with Runner(...) as runner:` calls it on the way out. The
        store is the caller's to close (`await runner.store.close()`)."""
        await self.wait_for_turns()
        if self.mcp_hub is not None:
            await self.mcp_hub.aclose()

    async def __aenter__(self) -> Runner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def wait_for_turns(self) -> None:
        """Wait until the turns this runner started through `stream` have ended and been
        stored (they go on when their reader stops reading); for a clean shutdown."""
        while self.detached_turns:
            await asyncio.gather(*self.detached_turns, return_exceptions=True)

    def run_sync(
        self,
        session_id: str,
        text: str,
        channel: str | None = None,
        context: Any = None,
        timeout: float | None = None,
    ) -> RunResult:
        """`run` for code without an event loop."""
        no_running_loop("run_sync")
        return asyncio.run(self.run(session_id, text, channel, context, timeout))

    def stream(
        self,
        session_id: str,
        text: str,
        channel: str | None = None,
        context: Any = None,
        timeout: float | None = None,
        *,
        idempotency_key: str | IdempotencyKey | None = None,
        client_tools: Sequence[ToolSpec | Mapping[str, Any]] | None = None,
    ) -> AsyncIterator[Event]:
        """Run one user turn and yield its events as they happen.

        Text arrives as `text_delta` events when the model streams; the last event is
        `run_completed` or `run_failed`, whose `.result` is the `RunResult`, and it comes
        once the turn is stored. A turn the store cannot keep (its last commit failed,
        its lock was lost) ends with `run_failed` and the store's code instead, then the
        stream raises that error, as `run` does. A turn, once started, runs to its end
        and is persisted even if the consumer stops reading (a client that disconnects
        finds the answer in the session). Each event's `seq` is its number in the
        session's event log. `context`, `timeout`, `idempotency_key` and `client_tools`
        are `run`'s (a retry yields the first call's stored events).
        """
        check_timeout(timeout, "timeout")
        if client_tools:
            return stream_turn(self, session_id, text, channel, context, timeout,
                               self._key(idempotency_key), self._client(client_tools))
        if idempotency_key is not None:
            return stream_turn(self, session_id, text, channel, context, timeout,
                               self._key(idempotency_key))
        if self._dispatch is not None:
            return self._dispatch.stream(self, session_id, text, channel, context, timeout)
        return stream_turn(self, session_id, text, channel, context, timeout)

    async def run_plan(
        self,
        session_id: str,
        steps: Sequence[PlanStep | Mapping[str, Any] | Sequence[Any]],
        context: Any = None,
        *,
        idempotency_key: str | IdempotencyKey | None = None,
    ) -> RunResult:
        """Run a supervisor's plan: each step delegates a task to an agent (`plan_step`).

        Steps run in order; a step with `parallel=[...]` (or a list) runs its steps at once.
        Each step gets its own record; answers of earlier steps reach later ones through
        `ctx.handoff.results` (and the handoff note), and are appended to the transcript.
        A failed step goes to the team's fallback (`error_recovery`); if that fails too,
        or there is none, the plan ends FAILED. `result.steps` holds every answer.
        `idempotency_key`: as `run`'s; a retry of the plan gets its result, no step
        runs again (the key is stored with the plan's one commit).
        """
        if self._dispatch is not None:
            return await self._dispatch.run_plan(self, session_id, steps, context)
        from .driver.plans import run_plan

        return await run_plan(self, session_id, steps, context,
                              None if idempotency_key is None else self._key(idempotency_key))

    async def ask(self, agent: Agent, text: str, *, output_type: Any = None) -> Any:
        """Ask `agent` once, outside any session: its instructions, `text` as the one
        user message, no tools, no turn, nothing stored. Returns the answer parsed into
        `output_type` (a pydantic model; default the agent's own `output_type`), else
        its text. Inside a run (a guardrail, a tool), use `ctx.ask`, which counts the
        call in the turn (`docs/guides/guardrails.md`)."""
        from .effects.ask import ask

        return await ask(self, None, agent, text, output_type)

    # -- people ----------------------------------------------------------------------------

    async def select_agent(self, session_id: str, name: str, *,
                           idempotency_key: str | IdempotencyKey | None = None
                           ) -> HandoffRecord:
        """Make `name` the session's active agent because the user picked it.

        Records a `user_request` handoff; raises `HandoffsError` with the rejection code
        (`unknown_target`, `not_user_selectable`, `system_only`, `target_disabled`,
        `channel_unsupported`) when the pick is not allowed. `idempotency_key`: as
        `run`'s; a retry of the pick gets its record (or its refusal) again.
        """
        key = self._key(idempotency_key)
        if self._dispatch is not None:
            return await self._dispatch.select_agent(self, session_id, name)
        from .driver.human import select_agent

        return await select_agent(self, session_id, name, key)

    async def reply_as_human(
        self, session_id: str, text: str, handoff_to: str | None = None, *,
        idempotency_key: str | IdempotencyKey | None = None,
    ) -> RunResult:
        """Post a human operator's message into the session, optionally handing back.

        The message is tagged with the active human agent. With `handoff_to`, control
        passes to that AI agent (reason `programmatic`) and it answers the user's next
        message. `idempotency_key`: as `run`'s; a retry stores nothing and gets the
        first reply's result (without its events).
        """
        key = self._key(idempotency_key)
        if self._dispatch is not None:
            return await self._dispatch.reply_as_human(self, session_id, text, handoff_to)
        from .driver.human import reply_as_human

        return await reply_as_human(self, session_id, text, handoff_to, key)

    # -- sessions ----------------------------------------------------------------------------

    async def get_session(self, session_id: str) -> SessionState | None:
        """A snapshot of the session (or None if it does not exist)."""
        state = await self.store.load(session_id)
        return state.snapshot() if state is not None else None

    async def transfer_session(
        self,
        session_id: str,
        to_agent: str,
        context: str = "summary",
        new_session_id: str | None = None,
    ) -> SessionState:
        """Continue the conversation in a new session that `to_agent` holds.

        `context` says what the new session carries: `summary` (a summary of the old
        transcript, written by the team's summarizer or the target's model, as its first
        message), `full` (a copy of the old transcript) or `reference` (only a link; give
        the target `stores.transfer.fetch_session_tool(store)` to read it). Shared memory
        is copied. The sessions link both ways (`metadata["transferred_from"]` and
        `["transferred_to"]`), and the old one records a `programmatic` handoff whose
        `extra["transferred_session"]` is the new id (default `<old id>-t<n>`).
        Returns a snapshot of the new session.
        """
        from .driver.transfer import transfer_session

        return await transfer_session(self, session_id, to_agent, context, new_session_id)

    # -- going back ----------------------------------------------------------------------------

    async def replay(self, session_id: str, from_turn: int, team: Team | None = None,
                     model: Model | str | None = None) -> Replay:
        """Play the session's user messages again from `from_turn`, on `team` and `model`
        (default: this runner's), and compare the routing turn by turn.

        The session is forked before `from_turn` (the fork is `Replay.replay_id`; the
        original is unchanged); each turn's original and new answering agent, handoff
        records and answer are side by side in `Replay.turns`, each with its `routing`
        (`same`, `different agent`, `different path`), and `Replay.totals` holds the
        replay's model calls, prompt bytes and tokens (`runtime.replay`)."""
        if self._dispatch is not None and (team is not None or model is not None):
            raise HandoffsError("replay(team=..., model=...) does not run under Temporal: "
                                "the workers' team and models answer every turn. Replay "
                                "with a runner in process over the same store, or without "
                                "team= and model=.", code="not_supported")
        from .replay import replay

        return await replay(self, session_id, from_turn, team, model)


def _unsupported() -> HandoffsError:
    return HandoffsError(
        "Idempotency keys are not supported by an executor that runs turns elsewhere "
        "(handoffs.temporal); leave idempotency_key out there, or run the session with "
        "the default executor.",
        code="idempotency_unsupported")
