"""The activities a session's workflow schedules: a model call, a tool call, and the
store's load and commit. They run on a worker, with the worker's runner (its team,
models and store); what they take and give is plain data (`codec`).

A model's own retries are turned off here: Temporal retries the activity with the
model's `RetryPolicy` instead (`options.model_retry`), so a failure is never retried
twice over. A tool's exception is not an activity failure: it comes back as data and
becomes the model's feedback, as in process; Temporal retries a tool call only when its
worker died or it timed out (heartbeats tell a dead worker from a slow tool).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ..core import typed_context
from ..core.context import HandoffContext, RunContext
from ..core.session import Checkpoint
from ..core.tools import HandoffTo, Tool, render_result
from ..errors import HandoffsError, ModelError
from ..log import fields
from ..models.base import Model
from ..models.retry import RetryPolicy
from ..runtime.effects.executor import within
from ..runtime.effects.summary import summary_model
from ..runtime.runner import Runner
from ..stores.edits import Held, session_turn
from . import codec
from .options import LIVE_TEXT

log = logging.getLogger("handoffs.temporal")
T = TypeVar("T")

MODEL = "handoffs.model"
TOOL = "handoffs.tool"
LOAD = "handoffs.load"
COMMIT = "handoffs.commit"
SUMMARY = "handoffs.summary"
MCP_OFFER = "handoffs.mcp_offer"
REMOTE = "handoffs.remote"
TOLD = "told"
"""The workflow's signal a tool activity sends what its tool reports (`Told`)."""

HOLD_CHECK = 2.0
"""Seconds between a held session's checks that its turn still runs (it may have ended
on another worker, which then wrote the session without the lock)."""


def _model_named(runner: Runner, agent: str) -> Model:
    """The model of agent `agent`: a team member's, or that of an agent a guardrail asks
    (`guardrail(asks=...)`, `Team.asked`); a clear failure, not retried, for any other
    name or an agent with no model."""
    if agent in runner.team:
        model = runner.model_for(agent)
    else:
        helper = runner.team.asked.get(agent)
        if helper is None:
            raise ApplicationError(
                f"Agent {agent!r} is not in the worker's team.", codec.error_to(HandoffsError(
                    f"ask: {agent!r} is neither a member of the worker's team nor an agent "
                    "one of its guardrails declares it asks (guardrail(asks=...)).",
                    code="unknown_agent")), type="HandoffsError", non_retryable=True)
        from ..runtime.settings import resolve_model

        model = resolve_model(helper, runner.model)
    if model is None:
        raise ApplicationError(f"Agent {agent!r} has no model.", codec.error_to(
            HandoffsError("no model", code="no_model")), type="HandoffsError",
            non_retryable=True)
    return model


class Activities:
    """The activities of one worker, bound to its runner (`worker.make_worker`)."""

    def __init__(self, runner: Runner, heartbeat: float) -> None:
        self.runner = runner
        self.heartbeat = heartbeat
        """Seconds between a running tool's heartbeats."""
        self._once: dict[int, Model] = {}
        self._holds: dict[str, asyncio.Task[None]] = {}
        """The sessions whose lock this worker holds while their turn runs (`_hold`)."""

    def all(self) -> list[Any]:
        return [self.model, self.tool, self.load, self.commit, self.summary, self.mcp_offer,
                self.remote]

    def _single_try(self, model: Model) -> Model:
        """The model with its own retries off (Temporal retries the activity)."""
        if not isinstance(getattr(model, "retry", None), RetryPolicy):
            return model
        single = self._once.get(id(model))
        if single is None:
            single = copy.copy(model)
            single.retry = RetryPolicy(max_retries=0)  # type: ignore[attr-defined]
            self._once[id(model)] = single
        return single

    async def _beating(self, work: Awaitable[T]) -> T:
        """`work`'s result, with a heartbeat now and then while it runs: a worker that
        died is seen within `heartbeat_timeout`, however long a call may take."""
        call = asyncio.ensure_future(work)
        try:
            while True:
                done, _ = await asyncio.wait({call}, timeout=self.heartbeat)
                if done:
                    return call.result()
                activity.heartbeat()
        except asyncio.CancelledError:
            call.cancel()
            raise

    @activity.defn(name=MODEL)
    async def model(self, args: dict[str, Any]) -> dict[str, Any]:
        """One model call of an agent: the response, or a failure whose retry Temporal's
        policy decides (a `ModelError` the provider calls retryable)."""
        d = args["request"]
        agent = d["agent"]
        runner = self.runner
        team = runner.team
        model = _model_named(runner, agent)
        request = codec.request_from(d, team.plan(agent).output if agent in team else None)
        deltas: list[str] | None = [] if args.get("stream") else None
        try:
            call = (self._single_try(model).complete(request) if deltas is None
                    else _streamed(self._single_try(model), request, deltas))
            response = await self._beating(call)
        except ModelError as exc:
            retry = runner_retry(model)
            after = exc.retry_after
            final = (not exc.retryable
                     or (after is not None and after > retry.max_retry_after))
            raise ApplicationError(str(exc), codec.error_to(exc), type="ModelError",
                                   non_retryable=final,
                                   next_retry_delay=_delay(after)) from _acyclic(exc)
        except Exception as exc:  # not the provider's: trying again would not help
            raise ApplicationError(str(exc), codec.error_to(exc), type=type(exc).__name__,
                                   non_retryable=True) from _acyclic(exc)
        out = codec.response_to(response)
        if deltas is not None:
            out["deltas"] = deltas
        return out

    @activity.defn(name=TOOL)
    async def tool(self, args: dict[str, Any]) -> dict[str, Any]:
        """One tool call: `{"text": ...}` (its result as the model reads it),
        `{"handoff_to": ...}`, or `{"error": ...}` (what it raised); each with the
        session's shared memory (and the team's typed context, `context`) as the tool
        left it."""
        agent, name = args["agent"], args["tool"]
        tl = await _find_tool(self.runner, agent, name, args["session_id"])
        handoff = args.get("handoff")
        told = Told(args.get("call_id") or "")
        typed = self.runner.team.context_type
        context = args.get("context")
        if typed is not None:
            context = typed.model_validate(context or {})
        ctx: RunContext[Any] = RunContext(
            args["session_id"], agent, args["turn"], dict(args.get("shared") or {}),
            context,
            None if handoff is None else HandoffContext(**handoff),
            args.get("channel"), args.get("call_id"), sink=told)
        try:
            call = tl.invoke(ctx, tl.parse(args["args"]))
            limit = args.get("timeout")
            if limit is not None:  # over it: the model's feedback, as in process
                call = within(call, limit, name)
            value = await self._beating(call)
        except Exception as exc:
            log.info("tool %s of %s raised %s", name, agent, type(exc).__name__,
                     extra=fields(ctx.session_id, ctx.turn, agent))
            return {"error": codec.error_to(exc), "shared": codec.jsonable(ctx.shared),
                    "told": told.over()} | (
                {} if typed is None else {"context": typed_context.dumped(ctx.context)})
        out: dict[str, Any] = {"shared": codec.jsonable(ctx.shared), "told": told.over()}
        if typed is not None:
            out["context"] = typed_context.dumped(ctx.context)
        if isinstance(value, HandoffTo):
            out["handoff_to"] = {"target": value.target, "reason": value.reason,
                                 "payload": codec.jsonable(value.payload)}
        else:
            out["text"] = render_result(value)
        return out

    @activity.defn(name=SUMMARY)
    async def summary(self, args: dict[str, Any]) -> dict[str, Any]:
        """A summariser's model call (a `history="summary"` handoff): the model picked
        as in process, from this worker's team and models."""
        d = args["request"]
        source = d["agent"].removesuffix(":summarizer")
        runner = self.runner
        route = runner.team.plan(source).routes_by_target.get(args["target"])
        summarizer = ((route.handoff.summarizer if route is not None else None)
                      or runner.team.summarizer)
        try:
            model = summary_model(summarizer, runner.model_for(source))
            response = await self._beating(model.complete(codec.request_from(d, None)))
        except Exception as exc:
            retryable = isinstance(exc, ModelError) and exc.retryable
            raise ApplicationError(str(exc), codec.error_to(exc), type=type(exc).__name__,
                                   non_retryable=not retryable) from _acyclic(exc)
        return codec.response_to(response)

    @activity.defn(name=MCP_OFFER)
    async def mcp_offer(self, args: dict[str, Any]) -> dict[str, Any]:
        """An agent's MCP tools as this worker's connections list them (`Hub.offer`)."""
        runner = self.runner
        agent = runner.team[args["agent"]]
        specs, down = await self._beating(runner.mcp.offer(
            agent, args["taken"], tuple(args["turn"])))
        return {"tools": [codec.jsonable(codec.tool_to(x)) for x in specs],
                "down": down}

    @activity.defn(name=REMOTE)
    async def remote(self, args: dict[str, Any]) -> dict[str, Any]:
        """One A2A exchange with a remote agent of the team (`handoffs.a2a.client.send`):
        its reply, and with `stream` the pieces of its text as they came (the turn's
        `text_delta` events). A refusal or failure of the remote side is the agent's
        failure with its code (`remote_unreachable`, ...), never retried here."""
        from ..a2a.client import send
        from ..core.remote import RemoteRequest

        agent = self.runner.team[args["agent"]]
        request = RemoteRequest(**args["request"])
        deltas: list[str] | None = [] if args.get("stream") else None
        try:
            reply = await self._beating(send(agent, request,  # type: ignore[arg-type]
                                             None if deltas is None else deltas.append))
        except Exception as exc:
            raise ApplicationError(str(exc), codec.error_to(exc), type=type(exc).__name__,
                                   non_retryable=True) from _acyclic(exc)
        return {"reply": {"state": reply.state, "text": reply.text,
                          "task_id": reply.task_id, "token": reply.token},
                "deltas": deltas or []}

    @activity.defn(name=LOAD)
    async def load(self, session_id: str) -> dict[str, Any] | None:
        """The stored session (None: there is none yet), read under its lock unless this
        worker holds it already for the turn running on it (`_hold`)."""
        store = self.runner.store
        if session_id in self._holds:
            state = await store.load(session_id)
            return None if state is None else codec.state_to(state)

        async def read(held: Held) -> dict[str, Any]:
            return codec.state_to(held.state)

        return await session_turn(store, session_id, read)

    async def _hold(self, session_id: str) -> None:
        """Hold the session's store lock from here on, while its turn runs in the
        workflow: the store reads `running` (not `interrupted`), and going back
        (`rewind`, `fork`) is refused with `turn_running` instead of cutting the turn's
        session from under it. A worker that dies lets go with its process.

        Only the lock, not a `stores.edits.session_turn`: the session and its checkpoint
        are the workflow's, and each commit activity brings its own (it may run on
        another worker, which then writes without the lock), so nothing here loads the
        session to change it or commits it."""
        if session_id in self._holds:
            return
        acquired = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(self._holding(session_id, acquired))
        self._holds[session_id] = task
        try:
            await asyncio.shield(acquired)
        except BaseException:
            task.cancel()
            self._holds.pop(session_id, None)
            raise

    async def _holding(self, session_id: str, acquired: asyncio.Future[None]) -> None:
        store = self.runner.store
        try:
            async with store.lock(session_id):
                acquired.set_result(None)
                while True:  # until released, or the turn ended on another worker
                    await asyncio.sleep(HOLD_CHECK)
                    state = await store.load(session_id)
                    if state is None or state.status != "running":
                        return
        except Exception as exc:
            if not acquired.done():
                acquired.set_exception(exc)
        finally:
            if self._holds.get(session_id) is asyncio.current_task():
                del self._holds[session_id]

    async def _release(self, session_id: str) -> None:
        task = self._holds.pop(session_id, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    @activity.defn(name=COMMIT)
    async def commit(self, args: dict[str, Any]) -> dict[str, Any]:
        """Store what the turn changed since its checkpoint, under the session's lock;
        the new version, event number and time. Done once: a retry after a worker died
        past the write finds it stored and returns the same."""
        state = codec.state_from(args["state"])
        since = Checkpoint(*args["since"])
        events = [codec.event_from(e) for e in args["events"]]
        store = self.runner.store
        sid = state.id
        try:
            # The workflow runs one update of its session at a time: within a turn it is
            # the only writer, and its worker holds the session's lock (`_hold`) until
            # the turn's status is no longer `running`.
            if state.status == "running":
                await self._hold(sid)
            stored = await store.load(sid)
            if (stored is not None and stored.version == state.version + 1
                    and len(stored.messages) == len(state.messages)
                    and len(stored.handoffs) == len(state.handoffs)):
                after = _after(stored)  # this commit's retry: it is stored already
            else:
                await store.commit(state, since, events)
                after = _after(state)
            if state.status != "running":
                await self._release(sid)
            return after
        except HandoffsError as exc:
            raise ApplicationError(str(exc), codec.error_to(exc), type=type(exc).__name__,
                                   non_retryable=True) from exc


def _acyclic(exc: BaseException) -> BaseException:
    """`exc` with any loop in its chain of causes cut (an error raised `from` itself),
    which Temporal would follow forever when it sends the failure."""
    seen = {id(exc)}
    e: BaseException | None = exc
    while e is not None:
        for attr in ("__cause__", "__context__"):
            nxt = getattr(e, attr)
            if nxt is not None and id(nxt) in seen:
                setattr(e, attr, None)
        e = e.__cause__ or e.__context__
        if e is not None:
            seen.add(id(e))
    return exc


def _after(state: Any) -> dict[str, Any]:
    return {"version": state.version, "event_seq": state.event_seq,
            "updated_at": state.updated_at}


async def _find_tool(runner: Runner, agent: str, name: str, session_id: str) -> Tool:
    """The team's tool `name` of `agent`, else one of its MCP servers' (listed on this
    worker first when another worker listed them for the turn)."""
    member = runner.team[agent]
    for tl in member.tools:
        if tl.name == name:
            return tl
    if member.mcp:
        hub = runner.mcp
        found = hub.tool(agent, name)
        if found is None:
            await hub.offer(member, (), (session_id, None))
            found = hub.tool(agent, name)
        if found is not None:
            return found
    raise ApplicationError(f"Agent {agent!r} has no tool {name!r} on this worker.",
                           {"type": "HandoffsError", "message": "unknown tool",
                            "code": "unknown_tool"}, type="HandoffsError",
                           non_retryable=True)


def runner_retry(model: Model) -> RetryPolicy:
    """The model's retry policy (the default one when it has none)."""
    retry = getattr(model, "retry", None)
    return retry if isinstance(retry, RetryPolicy) else RetryPolicy()


def _delay(after: float | None) -> Any:
    if after is None:
        return None
    from datetime import timedelta

    return timedelta(seconds=after)


class Told:
    """A tool activity's event sink (`RunContext.sink`): each `ctx.progress` /
    `ctx.custom_event` is signalled to the session's workflow at once (its `told`
    signal), which makes it the turn's event while the tool still runs, as in process.
    Once a signal fails, that event and the ones after it wait for the tool's result
    (`over`), which the workflow emits in order before the result: late, never lost."""

    __slots__ = ("call_id", "ended", "late")

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self.late: list[list[Any]] = []
        self.ended = False

    async def __call__(self, kind: str, fields: dict[str, Any]) -> None:
        if self.ended:
            raise HandoffsError(f"The tool call {self.call_id} is over: it can report "
                                "nothing more.", code="no_tool_call")
        if not self.late:
            try:
                info = activity.info()
                handle = activity.client().get_workflow_handle(info.workflow_id or "")
                await handle.signal(TOLD, {"call_id": self.call_id, "type": kind,
                                           "fields": fields})
                return
            except Exception as exc:  # the result carries it (and the ones after it)
                log.warning("tool call %s: its %s could not be signalled live (%s: %s); "
                            "it comes with the tool's result", self.call_id, kind,
                            type(exc).__name__, exc)
        self.late.append([kind, fields])

    def over(self) -> list[list[Any]]:
        """The events that wait for the result (the call reports nothing after this)."""
        self.ended = True
        return self.late


async def _streamed(model: Model, request: Any, deltas: list[str]) -> Any:
    """A streamed model call: each piece of text kept in `deltas` (the turn's
    `text_delta` events, made by the workflow from the result) and shown live to the
    workflow's `live` query meanwhile (`options.LIVE_TEXT`, when this worker runs it)."""
    from ..models.base import TextDelta

    key = activity.info().workflow_id or ""
    live = LIVE_TEXT[key] = (request.agent, deltas)
    response = None
    try:
        async for piece in model.stream(request):
            if isinstance(piece, TextDelta):
                deltas.append(piece.text)
            else:
                response = piece
    finally:
        if LIVE_TEXT.get(key) is live:
            del LIVE_TEXT[key]
    if response is None:
        raise ModelError("The model's stream ended without a response.")
    return response
