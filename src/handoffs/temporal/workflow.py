"""One workflow per session (its id is the session's id): each user turn, approval,
human reply and agent pick is an update that the workflow runs, one at a time, with the
runtime's own driver over the effects of `effects` (model and tool calls, loads and
commits as activities; the clock and ids from the workflow).

The session lives in the store, not in the workflow: between updates the workflow holds
nothing but its place, so a turn that waits for a person's approval or a human's reply
holds no worker, and a long session continues as new (`TemporalOptions.turns_per_run`,
or when Temporal suggests it) without carrying anything over.

The workflow runs without Temporal's sandbox (`worker.make_worker` says so): its code is
the library's driver, which takes its clock and ids from the executor only, and the
team's functions (instructions, guardrails, hooks) that the in-process runtime calls
too; the sandbox would re-import them for every run. Determinism is what the replay test
checks (`tests/temporal`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from ..errors import HandoffsError
from ..runtime.runner import Runner
from . import codec
from .activities import TOLD
from .codec import wrong_queue
from .effects import ActivityStore, InWorkflow
from .options import LIVE_TEXT, REPLAYING, WORKERS

NAME = "handoffs.Session"
"""The workflow's type name."""


@workflow.defn(name=NAME)
class SessionWorkflow:
    """A session's workflow (see the module)."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._handled = 0
        self._host: Runner | None = None
        self._feeds: dict[str, Any] = {}
        """The events of each streamed turn running (`live`)."""

    @workflow.run
    async def run(self, start: dict[str, Any]) -> None:
        """Wait for updates; continue as new after `turns_per_run` of them (or when
        Temporal suggests it), once none is running."""
        limit = self._runner_setup().options.turns_per_run
        await workflow.wait_condition(
            lambda: self._handled >= limit or workflow.info().is_continue_as_new_suggested())
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(start)

    def _runner_setup(self) -> Any:
        queue = workflow.info().task_queue
        setup = WORKERS.get(queue) or WORKERS.get(REPLAYING)
        if setup is None:
            raise RuntimeError(f"No handoffs worker for task queue {queue!r} in this "
                               "process (handoffs.temporal.make_worker registers one).")
        return setup

    def _runner(self) -> Runner:
        """The runtime's runner for this workflow: the worker's team, models and limits,
        with the workflow's executor and store."""
        if self._host is None:
            setup = self._runner_setup()
            worker: Runner = setup.runner
            host = Runner.from_config(worker.team, replace(worker.config, telemetry=False),
                                      model=worker.model, executor=InWorkflow(setup.options))
            host.store = ActivityStore(setup.options)  # type: ignore[assignment]
            host.agent_models = worker.agent_models
            self._host = host
        return self._host

    async def _one(self, args: dict[str, Any],
                   work: Callable[[Runner], Awaitable[Any]]) -> Any:
        """Run one update's work after the ones before it; what it raises is the update's
        failure (a handoffs error with its code), never the workflow's. An update sent
        for another task queue (the session was started on this one) is refused."""
        queue = args.get("task_queue")
        if (queue is not None and queue != workflow.info().task_queue
                and not workflow.unsafe.is_replaying()):  # a Replayer's queue is its own
            raise ApplicationError(
                "wrong task queue", codec.error_to(wrong_queue(
                    args["session_id"], workflow.info().task_queue, queue)),
                type="HandoffsError", non_retryable=True)
        async with self._lock:
            self._handled += 1
            runner = self._runner()
            # Traced as in process (the worker's telemetry), but not while the history
            # replays: a span of a replayed step was made when it first ran.
            runner.telemetry = (None if workflow.unsafe.is_replaying()
                                else self._runner_setup().runner.telemetry)
            try:
                return await work(runner)
            except Exception as exc:  # the update's failure, never a stuck workflow task
                raise ApplicationError(str(exc), codec.error_to(exc), type=type(exc).__name__,
                                       non_retryable=True) from exc

    @workflow.update(name="turn")
    async def turn(self, args: dict[str, Any]) -> dict[str, Any]:
        """A user's message: the turn's result (`codec.result_to`). With `stream`, a
        streamed turn (its model calls stream, its text is `text_delta` events) whose
        events the `live` query shows while it runs."""
        sid = args["session_id"]
        if not args.get("stream"):
            res = await self._one(args, lambda r: r.run(
                sid, args["text"], args.get("channel"), args.get("context"),
                args.get("timeout")))
            return codec.result_to(res)
        from ..runtime.driver.feed import Feed
        from ..runtime.driver.turn import run_turn

        feed = Feed()

        async def streamed(r: Runner) -> Any:
            self._feeds[sid] = feed
            try:
                return await run_turn(r, sid, args["text"], args.get("channel"),
                                      args.get("context"), None, args.get("timeout"), feed)
            finally:
                self._feeds.pop(sid, None)

        return codec.result_to(await self._one(args, streamed))

    @workflow.query(name="live")
    def live(self, args: dict[str, Any]) -> dict[str, Any]:
        """The running streamed turn's events past `after` (none when no streamed turn
        runs), and the text so far of its model call in flight when this worker runs it
        (what `TemporalExecutor.stream` shows as it comes)."""
        feed = self._feeds.get(args["session_id"])
        if feed is None:
            return {"events": [], "partial": []}
        after = args.get("after", -1)
        events = [e for e in feed.events if e.seq > after and not e.is_terminal]
        agent, text = LIVE_TEXT.get(workflow.info().workflow_id, ("", []))
        return {"events": codec.events_to(events), "agent": agent, "partial": list(text),
                "turn": self._host.running_turns[args["session_id"]].state.turn
                if self._host is not None and args["session_id"] in self._host.running_turns
                else 0}

    @workflow.signal(name="cancel")
    def cancel(self, args: dict[str, Any]) -> None:
        """Stop the running turn as `Runner.cancel` does in process (it ends FAILED
        `cancelled` and is stored; its running activity is cancelled)."""
        if self._host is not None:
            t = self._host.running_turns.get(args["session_id"])
            if t is not None and t.owner is not None and not t.stopping:
                t.stopping = True
                t.owner.cancel()

    @workflow.signal(name=TOLD)
    def told(self, args: dict[str, Any]) -> None:
        """What a running tool reports (`ctx.progress`, `ctx.custom_event`), signalled by
        its activity: the turn's event now, as in process. A call that is over (the
        activity outlived its turn's limit) is too late for it, as in process."""
        fx = None if self._host is None else self._host.executor
        sink = getattr(fx, "calls", {}).get(args["call_id"])
        if sink is None:
            return
        with contextlib.suppress(HandoffsError):  # the call is over
            sink(args["type"], args["fields"])

    @workflow.update(name="plan")
    async def plan(self, args: dict[str, Any]) -> dict[str, Any]:
        """A supervisor's plan (`Runner.run_plan`): its result."""
        res = await self._one(args, lambda r: r.run_plan(
            args["session_id"], args["steps"], args.get("context")))
        return codec.result_to(res)

    @workflow.update(name="resume")
    async def resume(self, args: dict[str, Any]) -> dict[str, Any] | None:
        """Answer the message of a turn that died (None: nothing waits)."""
        res = await self._one(args, lambda r: r.resume(args["session_id"], args.get("context")))
        return None if res is None else codec.result_to(res)

    @workflow.update(name="decide")
    async def decide(self, args: dict[str, Any]) -> dict[str, Any]:
        """A person's approval or rejection of a waiting tool call."""
        sid, call_id = args["session_id"], args["call_id"]
        if args["approved"]:
            res = await self._one(args, lambda r: r.approve(sid, call_id, args.get("context")))
        else:
            res = await self._one(args, lambda r: r.reject(sid, call_id, args.get("reason", ""),
                                                     args.get("context")))
        return codec.result_to(res)

    @workflow.update(name="select_agent")
    async def select_agent(self, args: dict[str, Any]) -> dict[str, Any]:
        """The user picks an agent: the handoff record."""
        record = await self._one(args, lambda r: r.select_agent(args["session_id"], args["name"]))
        return dict(record.to_dict())

    @workflow.update(name="reply_as_human")
    async def reply_as_human(self, args: dict[str, Any]) -> dict[str, Any]:
        """A human operator's message, optionally handing back to an agent."""
        res = await self._one(args, lambda r: r.reply_as_human(
            args["session_id"], args["text"], args.get("handoff_to")))
        return codec.result_to(res)
