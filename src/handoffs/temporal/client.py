"""`TemporalExecutor`: a `Runner` whose turns run as Temporal workflows, on workers.

    client = await Client.connect("127.0.0.1:7233")
    runner = Runner(team, store="sqlite:///sessions.db",
                    executor=TemporalExecutor(client, task_queue="support"))
    result = await runner.run("session-1", "I was charged twice")

Each call is an Update-with-Start of the session's workflow (workflow id = session id,
started if it is not running): `run` and `stream` a user turn, `approve` / `reject`,
`select_agent`, `reply_as_human`, `resume`. The workers do the work and write the
store; the runner here reads it (`get_session`, the server's pages and event streams).
`stream` yields the turn's events from the store as the workers commit them, then the
terminal event with the update's result.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from temporalio.client import Client, WithStartWorkflowOperation, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError

from ..core.events import Event
from ..core.handoff import HandoffRecord
from ..errors import HandoffsError
from ..runtime.effects.ids import new_id
from ..runtime.state.result import RunResult
from . import codec
from .workflow import SessionWorkflow

QUEUE_CHECK_AFTER = 1.0
"""Seconds an update may take before the executor checks that the session's workflow is
on its task queue (a turn quicker than that costs no check)."""


class TemporalExecutor:
    """Sends a runner's turns to the session workflows on `task_queue` (see the module).

    `client` is a connected `temporalio.client.Client`, or the server's "HOST:PORT" to
    connect to on first use (from the event loop that serves the turns; `namespace`
    then applies). `workflow_prefix` goes before the session id in the workflow id (for
    several teams sharing one namespace); `poll` is how often `stream` reads new events
    from the store (seconds)."""

    dispatcher: TemporalExecutor
    """This executor runs whole turns elsewhere (`Runner` hands them over:
    `state.host.Dispatcher`)."""

    def __init__(self, client: Client | str, task_queue: str, *, workflow_prefix: str = "",
                 poll: float = 0.05, namespace: str = "default") -> None:
        self.client = client
        self.namespace = namespace
        self._connecting: asyncio.Future[Client] | None = None
        self.task_queue = task_queue
        self.workflow_prefix = workflow_prefix
        self.poll = poll
        self.dispatcher = self
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        """The turns this executor sent that have not returned, by session id."""
        self._signals: set[asyncio.Future[Any]] = set()

    def attach(self, runner: Any) -> None:
        """Make this the executor of a runner built without it (`handoffs serve
        --temporal` does so with the runner it loaded)."""
        runner.executor = self
        runner._dispatch = self

    now = staticmethod(time.time)
    new_id = staticmethod(new_id)

    def model(self, t: Any, model: Any, request: Any) -> Any:
        """Refused: a model call runs on a worker (`handoffs worker`), in a turn's workflow."""
        raise HandoffsError("Under Temporal, model calls run on a worker (handoffs worker).",
                            code="invalid_argument")

    def tool(self, t: Any, tool: Any, ctx: Any, args: Any, call_id: str) -> Any:
        """Refused: a tool call runs on a worker (`handoffs worker`), in a turn's workflow."""
        raise HandoffsError("Under Temporal, tool calls run on a worker (handoffs worker).",
                            code="invalid_argument")

    def summary(self, t: Any, summarizer: Any, fallback_model: Any, request: Any,
                target: str) -> Any:
        """A session transfer's summary (`Runner.transfer(context="summary")`, which runs
        here, not in a turn): the summariser's model called from this process."""
        from ..runtime.effects.summary import summary_model

        return summary_model(summarizer, fallback_model).complete(request)

    def mcp_offer(self, t: Any, agent: Any, taken: Any) -> Any:
        """Refused: MCP servers are listed on a worker, in a turn's workflow."""
        raise HandoffsError("Under Temporal, MCP tools are listed on a worker.",
                            code="invalid_argument")

    within = staticmethod(asyncio.wait_for)

    def remote(self, t: Any, agent: Any, request: Any) -> Any:
        """Refused: a remote agent's call (A2A) runs on a worker, in a turn's workflow."""
        raise HandoffsError("Under Temporal, remote agents are called from a worker.",
                            code="remote_failed")

    # -- updates ------------------------------------------------------------------------

    async def connected(self) -> Client:
        """The client, connected once when given as an address."""
        client = self.client
        if isinstance(client, Client):
            return client
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(
                Client.connect(client, namespace=self.namespace))
        try:
            self.client = await asyncio.shield(self._connecting)
        except Exception:
            self._connecting = None
            raise
        return self.client

    async def _update(self, name: str, session_id: str, args: dict[str, Any]) -> Any:
        start = WithStartWorkflowOperation(
            SessionWorkflow.run, {"session_id": session_id},
            id=self.workflow_prefix + session_id, task_queue=self.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING)
        try:
            client = await self.connected()
            update = asyncio.ensure_future(client.execute_update_with_start_workflow(
                name, {"session_id": session_id, "task_queue": self.task_queue, **args},
                start_workflow_operation=start))
            if name == "turn":
                self._inflight[session_id] = update
            try:
                done, _ = await asyncio.wait({update}, timeout=QUEUE_CHECK_AFTER)
                if not done:  # slow, or sent to a queue nobody here serves: look
                    await self._check_queue(client, session_id, update)
                return await update
            finally:
                if not update.done():
                    update.cancel()
                    update.add_done_callback(_retrieved)
                if self._inflight.get(session_id) is update:
                    del self._inflight[session_id]
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.details:
                detail = cause.details[0]
                if isinstance(detail, dict):
                    raise codec.error_from(detail) from exc
            raise

    async def _check_queue(self, client: Client, session_id: str,
                           update: asyncio.Future[Any]) -> None:
        """Fail at once when the session's workflow runs on another task queue (the
        update would wait for a worker of that queue, then time out)."""
        try:
            info = await client.get_workflow_handle(
                self.workflow_prefix + session_id).describe()
        except Exception:  # not started yet, or the server is slow: the update tells
            return
        if info.task_queue != self.task_queue and not update.done():
            raise codec.wrong_queue(session_id, info.task_queue, self.task_queue)

    def cancel(self, runner: Any, session_id: str) -> bool:
        """Stop the turn this executor sent on the session (a `cancel` signal to its
        workflow, which stops it as `Runner.cancel` does in process: FAILED `cancelled`,
        stored); False when this process sent none that still runs."""
        update = self._inflight.get(session_id)
        if update is None or update.done():
            return False
        loop = update.get_loop()
        handle = self.client.get_workflow_handle(  # type: ignore[union-attr]
            self.workflow_prefix + session_id)
        signal = handle.signal("cancel", {"session_id": session_id})
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._signals.add(task := asyncio.ensure_future(signal))
            task.add_done_callback(self._signals.discard)
        else:
            asyncio.run_coroutine_threadsafe(signal, loop)
        return True

    async def run(self, runner: Any, session_id: str, text: str, channel: str | None,
                  context: Any, timeout: float | None, stream: bool = False) -> RunResult:
        """One user turn, run by the session's workflow (`stream`: as a streamed turn,
        whose model calls stream and whose text becomes `text_delta` events)."""
        from ..runtime.driver.turn import check_text

        check_text(runner, text)
        args = {"text": text, "channel": channel, "context": codec.jsonable(context),
                "timeout": timeout}
        if stream:
            args["stream"] = True
        d = await self._update("turn", session_id, args)
        return codec.result_from(d)

    async def stream(self, runner: Any, session_id: str, text: str, channel: str | None,
                     context: Any, timeout: float | None) -> AsyncIterator[Event]:
        """The turn's events as the workflow makes them (its `live` query, every `poll`
        seconds), its text as it comes when the model call runs on the worker that runs
        the workflow; the terminal one (with the result) once the update returned."""
        turn = asyncio.ensure_future(self.run(runner, session_id, text, channel, context,
                                              timeout, stream=True))
        handle = (await self.connected()).get_workflow_handle(
            self.workflow_prefix + session_id)
        after = -1  # the last event shown (live text shows under the number it will get)
        shown = 0  # pieces of the model call in flight shown
        while not turn.done():
            await asyncio.wait({turn}, timeout=self.poll)
            if turn.done():
                break
            try:
                live = await handle.query("live", {"session_id": session_id,
                                                   "after": after})
            except Exception:  # not started yet, or between tasks: ask again
                continue
            if live["events"]:
                shown = 0
            for d in live["events"]:
                if d["seq"] > after:
                    after = d["seq"]
                    yield codec.event_from(d)
            for piece in live["partial"][shown:]:
                shown += 1
                after += 1
                yield Event("text_delta", session_id, live["turn"], time.time(),
                            {"agent": live["agent"], "text": piece}, None, after)
        res = await turn
        for e in res.events:
            if e.seq > after or e.is_terminal:
                yield e

    async def run_plan(self, runner: Any, session_id: str, steps: Any,
                       context: Any) -> RunResult:
        """`Runner.run_plan` as an update of the session's workflow (the steps checked
        here first, sent as data)."""
        from ..core.plan import PlanStep

        plan = [_step_data(PlanStep.of(s)) for s in steps]
        if not plan:
            raise HandoffsError("A plan needs at least one step.", code="invalid_plan")
        d = await self._update("plan", session_id, {"steps": plan,
                                                    "context": codec.jsonable(context)})
        return codec.result_from(d)

    async def resume(self, runner: Any, session_id: str, context: Any) -> RunResult | None:
        """`Runner.resume` as an update of the session's workflow."""
        d = await self._update("resume", session_id, {"context": codec.jsonable(context)})
        return None if d is None else codec.result_from(d)

    async def decide(self, runner: Any, session_id: str, call_id: str, approved: bool,
                     reason: str, context: Any) -> RunResult:
        """`Runner.approve` / `reject` as an update of the session's workflow."""
        if not isinstance(reason, str):
            raise HandoffsError("The reason must be a string.", code="invalid_argument")
        d = await self._update("decide", session_id, {
            "call_id": call_id, "approved": approved, "reason": reason,
            "context": codec.jsonable(context)})
        return codec.result_from(d)

    async def select_agent(self, runner: Any, session_id: str, name: str) -> HandoffRecord:
        """`Runner.select_agent` as an update of the session's workflow."""
        d = await self._update("select_agent", session_id, {"name": name})
        return HandoffRecord.from_dict(d)

    async def reply_as_human(self, runner: Any, session_id: str, text: str,
                             handoff_to: str | None) -> RunResult:
        """`Runner.reply_as_human` as an update of the session's workflow."""
        from ..runtime.driver.turn import check_text

        check_text(runner, text)
        d = await self._update("reply_as_human", session_id, {"text": text,
                                                              "handoff_to": handoff_to})
        return codec.result_from(d)


def _retrieved(update: asyncio.Future[Any]) -> None:
    """Take the outcome of an update given up on (its failure is not news)."""
    if not update.cancelled():
        update.exception()


def _step_data(step: Any) -> dict[str, Any]:
    """A `PlanStep` as data (`PlanStep.of` reads it back)."""
    if step.parallel:
        return {"parallel": [_step_data(s) for s in step.parallel], "name": step.name}
    return {"agent": step.agent, "task": step.task, "name": step.name}
