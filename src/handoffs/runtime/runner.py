"""The runner: one user turn, as DESIGN.md describes it.

Decisions live in `core` (the policy, the history views); this module sequences them:
call the model, run ordinary tools, decide the handoffs, append to the transcript, emit
events, persist.

Where DESIGN.md's short form needed a precise reading:
- "One handoff per response" applies to one-way transfers. Delegations (`returns=True`)
  in the same response are each validated and run concurrently before the transfer; only
  a second one-way request is refused (`multiple_handoffs`).
- Accepted one-way handoff calls are never replayed to a model. Refused ones are: the
  refusal is the call's result, and the model must read it to act on it. They stay a valid
  call/result pair in every view.
- A delegate works on its own line (a fixed window of the conversation plus its own
  messages); its tool traffic never enters the shared transcript, only its answer does,
  as the caller's call result.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.agent import Agent
from ..core.context import RunContext
from ..core.events import Event
from ..core.guardrails import GuardrailResult, guardrail_name
from ..core.handoff import (
    Handoff,
    HandoffReason,
    HandoffRecord,
    context_json,
    handoff_note,
)
from ..core.history import (
    Window,
    last_user_index,
    render_conversation,
    render_full,
    views_of,
)
from ..core.messages import (
    AssistantMessage,
    HandoffMark,
    Message,
    Note,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ..core.plan import PlanStep
from ..core.policy import MULTIPLE_HANDOFFS, Rejection
from ..core.session import SessionState, ViewSpec
from ..core.team import AgentPlan, Route, Team
from ..core.tools import HandoffTo, Tool, ToolSpec, render_result
from ..errors import HandoffsError, ModelError
from ..models.base import NO_SETTINGS, Model, ModelRequest, ModelResponse, TextDelta, Usage
from ..stores.base import SessionStore, open_store
from .ids import new_id
from .requests import HandoffAsk, error_text, parse_arguments, payload_json, validation_error
from .result import RunError, RunResult, RunStatus
from .turn import Answer as _Answer
from .turn import Fail as _Fail
from .turn import Leg as _Leg
from .turn import Outcome as _Outcome
from .turn import Transfer as _Transfer
from .turn import Turn as _Turn

if TYPE_CHECKING:
    pass

_LLM = HandoffReason.LLM
_PLAN_STEP = HandoffReason.PLAN_STEP
_PROGRAMMATIC = HandoffReason.PROGRAMMATIC

EMPTY_RESPONSE_FEEDBACK = (
    "Your last response was empty. Answer the user, call a tool, or hand off."
)


class Runner:
    """Runs a team's conversations: `run` one user turn, `stream` its events, move agents.

        runner = Runner(team, model=ScriptedModel([...]))
        result = await runner.run("session-1", "I was charged twice")
    """

    def __init__(
        self,
        team: Team,
        model: Model | str | None = None,
        store: SessionStore | str | None = None,
        max_steps: int = 20,
    ) -> None:
        if not isinstance(team, Team):
            raise HandoffsError("Runner needs a Team; wrap your agents: Team([...]).",
                                code="invalid_team")
        if max_steps < 1:
            raise HandoffsError("max_steps must be at least 1.", code="invalid_argument")
        self.team = team
        self.model = model
        self.store: SessionStore = open_store(store)
        self.max_steps = max_steps
        self._models: dict[str, Model | None] = {
            a.name: self._resolve_model(a) for a in team.agents
        }
        self._detached: set[asyncio.Future[RunResult]] = set()
        """Streamed turns whose consumer stopped reading: kept alive until they finish."""

    def _resolve_model(self, agent: Agent) -> Model | None:
        if agent.is_human:
            return None
        spec: Any = agent.model if agent.model is not None else self.model
        if spec is None:
            spec = os.environ.get("HANDOFFS_MODEL") or None
        if spec is None:
            raise HandoffsError(
                f"Agent {agent.name!r} has no model. Pass Runner(team, model=...), set "
                "Agent(model=...), or set HANDOFFS_MODEL (e.g. openai:gpt-4.1-mini).",
                code="no_model",
            )
        if isinstance(spec, str):
            from ..models.registry import get_model

            return get_model(spec)
        if not hasattr(spec, "complete"):
            raise HandoffsError(
                f"Agent {agent.name!r}: {spec!r} is not a model (it has no complete()).",
                code="no_model",
            )
        model: Model = spec
        return model

    # -- public API ------------------------------------------------------------------

    async def run(
        self,
        session_id: str,
        text: str,
        channel: str | None = None,
        context: Any = None,
    ) -> RunResult:
        """Run one user turn on the session and return its result.

        The active agent of the session receives the message; if a handoff happens the
        target answers in the same turn (unless the route says `next_turn`), and the
        session remembers it as the active agent for the next message.
        """
        return await self._turn(session_id, text, channel, context, None)

    def run_sync(
        self,
        session_id: str,
        text: str,
        channel: str | None = None,
        context: Any = None,
    ) -> RunResult:
        """`run` for code without an event loop."""
        _no_running_loop("run_sync")
        return asyncio.run(self.run(session_id, text, channel, context))

    async def stream(
        self,
        session_id: str,
        text: str,
        channel: str | None = None,
        context: Any = None,
    ) -> AsyncIterator[Event]:
        """Run one user turn and yield its events as they happen.

        Text arrives as `text_delta` events when the model streams; the last event is
        `run_completed` or `run_failed`, whose `.result` is the `RunResult`. A turn, once
        started, runs to its end and is persisted even if the consumer stops reading (a
        client that disconnects finds the answer in the session).
        """
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        task = asyncio.ensure_future(
            self._turn(session_id, text, channel, context, queue.put_nowait)
        )
        # A turn always ends with a terminal event unless it raised; None marks the end.
        task.add_done_callback(lambda _: queue.put_nowait(None))
        self._detached.add(task)
        task.add_done_callback(self._detached.discard)
        while True:
            event = await queue.get()
            if event is None:
                break
            yield event
            if event.is_terminal:
                break
        await task

    async def select_agent(self, session_id: str, name: str) -> HandoffRecord:
        """Make `name` the session's active agent because the user picked it.

        Records a `user_request` handoff; raises `HandoffsError` with the rejection code
        (`unknown_target`, `not_user_selectable`, `target_disabled`,
        `channel_unsupported`) when the pick is not allowed.
        """
        async with self.store.lock(session_id):
            state = await self._load(session_id)
            since = state.checkpoint()
            source = state.active_agent or self.team.entry
            rejection = self.team.policy.check_selection(self.team, name, state)
            record = HandoffRecord(
                id=new_id(), source=source, target=name, reason=HandoffReason.USER_REQUEST,
                explanation="The user picked this agent.", accepted=rejection is None,
                rejection=rejection.code if rejection else None,
                message=rejection.message if rejection else "", at=time.time(),
                turn=state.turn,
            )
            state.handoffs.append(record)
            if rejection is None:
                state.active_agent = name
                state.view = ViewSpec("full", 0, 0, record.id)
                state.shared["handoff_context"] = context_json(record)
                if self.team[name].is_human:
                    state.status = "waiting_for_human"
                elif state.status == "waiting_for_human":
                    state.status = "idle"
            await self.store.commit(state, since)
        if rejection is not None:
            raise HandoffsError(rejection.message, code=rejection.code)
        return record

    async def reply_as_human(
        self, session_id: str, text: str, handoff_to: str | None = None
    ) -> RunResult:
        """Post a human operator's message into the session, optionally handing back.

        The message is tagged with the active human agent. With `handoff_to`, control
        passes to that AI agent (reason `programmatic`) and it answers the user's next
        message.
        """
        async with self.store.lock(session_id):
            state = await self._load(session_id)
            human = self.team.get(state.active_agent or "")
            if human is None or not human.is_human:
                raise HandoffsError(
                    f"No human agent holds session {session_id!r} (the active agent is "
                    f"{state.active_agent!r}); hand off to a HumanAgent first.",
                    code="not_waiting_for_human",
                )
            since = state.checkpoint()
            t = _Turn(self, state, None, None)
            state.messages.append(AssistantMessage(text, human.name))
            t.emit("message", {"agent": human.name, "text": text})
            status = RunStatus.WAITING_FOR_HUMAN
            agent = human.name
            if handoff_to is not None:
                target = self.team.get(handoff_to)
                rejection = (
                    self.team.policy.check_selection(self.team, handoff_to, state)
                    if target is not None and not target.is_human
                    else Rejection("unknown_target",
                                   f"{handoff_to!r} is not an AI agent of this team.")
                )
                if rejection is not None:
                    raise HandoffsError(rejection.message, code=rejection.code)
                assert target is not None
                record = HandoffRecord(
                    id=new_id(), source=human.name, target=target.name,
                    reason=_PROGRAMMATIC,
                    explanation="The human operator handed the conversation back.",
                    at=time.time(), turn=state.turn,
                )
                t.add_record(record)
                self._move(t, None, record, target, None)
                status = RunStatus.COMPLETED
                agent = target.name
                state.status = "idle"
            await self.store.commit(state, since, t.lazy_events)
            result = RunResult(session_id, text, agent, status, state.turn, t.records)
            result.bind_events(t)
            return result

    async def run_plan(
        self,
        session_id: str,
        steps: Sequence[PlanStep | Mapping[str, Any] | Sequence[Any]],
        context: Any = None,
    ) -> RunResult:
        """Run a supervisor's plan: each step delegates a task to an agent (`plan_step`).

        Steps run in order; a step with `parallel=[...]` (or a list) runs its steps at once.
        Each step gets its own record; answers of earlier steps reach later ones through
        `ctx.handoff.results` (and the handoff note), and are appended to the transcript.
        A failed step goes to the team's fallback (`error_recovery`); if that fails too,
        or there is none, the plan ends FAILED. `result.steps` holds every answer.
        """
        plan = [PlanStep.of(s) for s in steps]
        if not plan:
            raise HandoffsError("A plan needs at least one step.", code="invalid_plan")
        async with self.store.lock(session_id):
            state = await self._load(session_id)
            state.turn += 1
            since = state.checkpoint()
            t = _Turn(self, state, context, None)
            supervisor = self.team.supervisor or state.active_agent or self.team.entry
            state.messages.append(Note(f"Plan of {len(plan)} steps by {supervisor}.",
                                       supervisor))
            t.emit("run_started", {"agent": supervisor, "text": f"plan ({len(plan)} steps)"})
            leg = _Leg(self.team.plan(supervisor), main=True)
            answers: dict[str, str] = {}
            result: RunResult | None = None
            last = ""
            last_agent = supervisor
            counter = 0
            for step in plan:
                group = step.parallel or (step,)
                named = []
                for s in group:
                    counter += 1
                    named.append((s.name or f"step{counter}", s))
                outs = await asyncio.gather(*(
                    self._plan_step(t, leg, name, s, dict(answers)) for name, s in named))
                for (name, s), (text, fail) in zip(named, outs, strict=True):
                    if fail is not None:
                        result = self._failed(t, fail)
                        break
                    answers[name] = text
                    state.messages.append(AssistantMessage(text, s.agent))
                    last, last_agent = text, s.agent
                if result is not None:
                    break
            if result is None:
                result = self._result(t, last, last_agent, RunStatus.COMPLETED)
            result.steps = answers
            self._finish(t, result)
            await self.store.commit(state, since, t.lazy_events)
            return result

    async def _plan_step(self, t: _Turn, leg: _Leg, name: str, step: PlanStep,
                         earlier: dict[str, str]) -> tuple[str, _Fail | None]:
        """One plan step as a `plan_step` delegation, with error recovery once."""
        source = leg.agent.name
        t.emit("plan_step_started", {"step": name, "agent": step.agent, "task": step.task})
        rejection = self.team.policy.check_plan_step(self.team, source, step.agent, t.state)
        if rejection is not None:
            fail: _Fail | None = _Fail(rejection.code, rejection.message, step.agent)
            text = ""
        else:
            text, fail = await self._step_delegation(t, leg, name, step.agent, step.task,
                                                     earlier, _PLAN_STEP)
        if fail is not None and fail.recoverable and self.team.fallback not in (
                None, step.agent):
            earlier = {**earlier, "failed": f"{fail.agent}: {fail.code}: {fail.message}"}
            text, fail = await self._step_delegation(
                t, leg, name, self.team.fallback or "", step.task, earlier,
                HandoffReason.ERROR_RECOVERY,
                {"code": fail.code, "message": fail.message, "agent": fail.agent})
        t.emit("plan_step_completed", {"step": name, "agent": step.agent, "text": text,
                                       "status": "failed" if fail else "completed"})
        return text, fail

    async def _step_delegation(self, t: _Turn, leg: _Leg, name: str, agent: str, task: str,
                               earlier: dict[str, str], reason: HandoffReason,
                               error: dict[str, str] | None = None
                               ) -> tuple[str, _Fail | None]:
        target = self.team[agent]
        route = Route(leg.agent.name, Handoff(agent, returns=True), target, "plan_step",
                      ToolSpec("plan_step", "", {}))
        extra: dict[str, Any] = {"step": name, "task": task, "results": earlier}
        if error is not None:
            extra["error"] = error
        record = HandoffRecord(new_id(), leg.agent.name, agent, reason, task, at=time.time(),
                               turn=t.state.turn, returns=True, extra=extra)
        t.add_record(record)
        return await self._delegate(t, leg, route, record, None, task)

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
        from ..core.session import Checkpoint

        if context not in ("summary", "full", "reference"):
            raise HandoffsError(f"context must be 'summary', 'full' or 'reference', not "
                                f"{context!r}.", code="invalid_argument")
        target = self.team.get(to_agent)
        if target is None:
            raise HandoffsError(f"There is no agent named {to_agent!r} in this team.",
                                code="unknown_target")
        if not target.enabled:
            raise HandoffsError(f"{to_agent!r} is not available right now.",
                                code="target_disabled")
        store = self.store
        async with store.lock(session_id):
            old = await store.load(session_id)
            if old is None:
                raise HandoffsError(f"There is no session {session_id!r} to transfer.",
                                    code="unknown_session")
            if (old.channel is not None and target.channels is not None
                    and old.channel not in target.channels):
                raise HandoffsError(f"{to_agent!r} does not serve the {old.channel!r} "
                                    "channel.", code="channel_unsupported")
            source = old.active_agent or self.team.entry
            n = 1 + sum(1 for r in old.handoffs if "transferred_session" in r.extra)
            new_sid = new_session_id or f"{session_id}-t{n}"
            shared = {k: v for k, v in old.shared.items() if k != "handoff_context"}
            new = SessionState(new_sid, active_agent=to_agent, channel=old.channel,
                               shared=json.loads(json.dumps(shared)),
                               metadata={"transferred_from": session_id,
                                         "transfer_context": context})
            if context == "full":
                new.messages.extend(old.messages)
                new.messages.append(Note(f"Transferred from session {session_id!r} "
                                         f"({source}).", to_agent))
            elif context == "summary":
                from .summary import summarize

                model = self._models.get(to_agent) or self._models.get(source)
                summary = await summarize(self.team.summarizer, model, old.messages,
                                          source, to_agent)
                new.messages.append(Note(
                    f"Summary of the conversation so far (session {session_id!r}, with "
                    f"{source}):\n{summary}", to_agent, to_model=True))
            else:
                new.messages.append(Note(
                    f"This conversation continues session {session_id!r} (with {source}); "
                    "its transcript is not copied here. Read it with the "
                    "fetch_previous_session tool when you need it.", to_agent, to_model=True))
            async with store.lock(new_sid):
                if await store.load(new_sid) is not None:
                    raise HandoffsError(f"Session {new_sid!r} already exists; pass another "
                                        "new_session_id.", code="session_exists")
                await store.commit(new, Checkpoint(0, 0, 0))
            since = old.checkpoint()
            old.handoffs.append(HandoffRecord(
                id=new_id(), source=source, target=to_agent,
                reason=HandoffReason.PROGRAMMATIC,
                explanation=f"Session transferred to {new_sid!r} ({context}).",
                at=time.time(), turn=old.turn,
                extra={"transferred_session": new_sid, "context": context}))
            old.messages.append(Note(f"Transferred to session {new_sid!r} ({to_agent}).",
                                     source))
            old.metadata["transferred_to"] = new_sid
            await store.commit(old, since)
        return new.snapshot()

    # -- the turn --------------------------------------------------------------------

    async def _load(self, session_id: str) -> SessionState:
        state = await self.store.load(session_id)
        if state is None:
            state = SessionState(session_id, active_agent=self.team.entry)
        return state

    async def _turn(
        self,
        session_id: str,
        text: str,
        channel: str | None,
        context: Any,
        sink: Callable[[Event], None] | None,
    ) -> RunResult:
        if not isinstance(text, str):
            raise HandoffsError(f"The user's message must be a string, not {type(text)}.",
                                code="invalid_argument")
        store = self.store
        async with store.lock(session_id):
            state = await self._load(session_id)
            if channel is not None:
                state.channel = channel
            name = state.active_agent
            if name is None or name not in self.team:
                name = state.active_agent = self.team.entry
                state.view = ViewSpec()
            pending = _pending_message(state)
            if pending is not None and pending.text == text:
                # The same message again after an interrupted turn: answer it, once.
                since = state.checkpoint()
                t = _Turn(self, state, context, sink)
                state.messages.append(Note("The previous turn was interrupted; resumed.",
                                           name))
            else:
                if pending is not None:
                    await self._answer_pending(state, context)
                state.turn += 1
                since = state.checkpoint()
                t = _Turn(self, state, context, sink)
                t.user_index = len(state.messages)
                state.messages.append(UserMessage(text, name))
                state.status = "running"
                # Durable before any model call: a crash from here on loses no input.
                await store.commit(state, since)
                since = state.checkpoint()
            t.emit("run_started", {"agent": name, "text": text})
            try:
                result = await self._drive(t, name, text)
            except Exception as exc:  # a bug or a tool with on_error="raise"
                code = getattr(exc, "code", "internal_error")
                result = self._failed(t, _Fail(code, f"{type(exc).__name__}: {exc}",
                                               state.active_agent or name))
            state.status = ("waiting_for_human" if result.status is RunStatus.WAITING_FOR_HUMAN
                            else "idle")
            self._finish(t, result)
            await store.commit(state, since, t.lazy_events)
            return result

    async def _answer_pending(self, state: SessionState, context: Any) -> None:
        """Finish a turn a crash interrupted, before taking the next message."""
        pending = _pending_message(state)
        assert pending is not None
        since = state.checkpoint()
        t = _Turn(self, state, context, None)
        state.messages.append(Note("The previous turn was interrupted; resumed.",
                                   state.active_agent or self.team.entry))
        name = state.active_agent or self.team.entry
        t.emit("run_started", {"agent": name, "text": pending.text})
        try:
            result = await self._drive(t, name, pending.text, check_input=False)
        except Exception as exc:
            result = self._failed(t, _Fail(getattr(exc, "code", "internal_error"),
                                           str(exc), name))
        state.status = ("waiting_for_human" if result.status is RunStatus.WAITING_FOR_HUMAN
                        else "idle")
        self._finish(t, result)
        await self.store.commit(state, since, t.lazy_events)

    def _finish(self, t: _Turn, result: RunResult) -> None:
        result.bind_events(t)
        if result.status is RunStatus.FAILED:
            err = result.error
            t.emit("run_failed", {
                "status": result.status, "agent": result.agent,
                "code": err.code if err else "error", "message": err.message if err else "",
            }, result)
        else:
            t.emit("run_completed", {"status": result.status, "agent": result.agent,
                                     "output": result.output}, result)

    def _result(self, t: _Turn, output: str, agent: str, status: RunStatus,
                error: RunError | None = None) -> RunResult:
        return RunResult(t.state.id, output, agent, status, t.state.turn, t.records, error,
                         t.usage, t.usage_by_agent)

    def _failed(self, t: _Turn, fail: _Fail) -> RunResult:
        return self._result(t, "", fail.agent, RunStatus.FAILED,
                            RunError(fail.code, fail.message, fail.agent))

    async def _drive(self, t: _Turn, name: str, text: str, check_input: bool = True
                     ) -> RunResult:
        """Run the main line from the active agent until someone answers (or it fails)."""
        state = t.state
        team = self.team
        agent = team[name]
        if agent.is_human:
            t.emit("human_waiting", {"agent": name, "display_name": agent.label})
            return self._result(t, "", name, RunStatus.WAITING_FOR_HUMAN)
        leg = _Leg(team.plan(name), main=True)
        incoming = self._incoming(state)
        if incoming is not None:
            leg.handed(*incoming)
        t.emit("agent_started", {"agent": name, "display_name": agent.label})
        outcome: _Outcome | None = None
        if check_input and agent.input_guardrails:
            outcome = await self._guardrails(t, leg, "input", text)
        while True:
            if outcome is None:
                outcome = await self._activation(t, leg)
            if isinstance(outcome, _Answer):
                tripped = (await self._guardrails(t, leg, "output", outcome.text)
                           if leg.agent.output_guardrails else None)
                if tripped is None:
                    return self._result(t, outcome.text, outcome.agent, RunStatus.COMPLETED)
                outcome = tripped
            if isinstance(outcome, _Fail):
                recovery = self._recover(t, leg, outcome)
                if recovery is None:
                    return self._failed(t, outcome)
                outcome = recovery
            target = outcome.target
            route = outcome.route
            if route is not None and route.handoff.history == "summary":
                # Made once, from what the source saw, before the view moves on.
                outcome.record.summary = await self._make_summary(t, leg, route)
            self._move(t, leg, outcome.record, target, route, outcome.payload)
            if target.is_human:
                t.emit("human_waiting", {"agent": target.name, "display_name": target.label})
                return self._result(t, "", target.name, RunStatus.WAITING_FOR_HUMAN)
            if route is not None and route.handoff.respond == "next_turn":
                said = _last_text_of(state.messages, outcome.record.source)
                output = said or f"Transferring you to {target.label}."
                if not said:
                    state.messages.append(AssistantMessage(output, outcome.record.source))
                return self._result(t, output, target.name, RunStatus.HANDED_OFF)
            leg.switch(team.plan(target.name))
            t.emit("agent_started", {"agent": target.name, "display_name": target.label})
            if target.input_guardrails:
                outcome = await self._guardrails(t, leg, "input", _turn_text(t))
            else:
                outcome = None

    def _incoming(self, state: SessionState
                  ) -> tuple[HandoffRecord, Any, Route | None] | None:
        """How the active agent got the conversation, from the record that opened its view."""
        rid = state.view.record_id
        if rid is None:
            return None
        record = state.record(rid)
        if record is None:
            return None
        payload: Any = record.payload
        route = self.team.plan(record.source).routes_by_target.get(record.target) \
            if record.source in self.team else None
        if route is not None and route.handoff.payload is not None and payload is not None:
            with contextlib.suppress(validation_error()):
                payload = route.handoff.payload.model_validate(payload)
        return record, payload, route

    def _move(self, t: _Turn, leg: _Leg | None, record: HandoffRecord, target: Agent,
              route: Route | None, payload: Any = None) -> None:
        """Make `target` the active agent of the main line after an accepted handoff."""
        state = t.state
        previous = state.active_agent
        pivot = len(state.messages)
        h = route.handoff if route is not None else None
        mode = h.history if h is not None else "full"
        if callable(mode):
            spec = ViewSpec("custom", 0, pivot, record.id)
        elif mode == "full":
            spec = ViewSpec("full", 0, 0, record.id)
        elif mode == "last_user":
            start = t.user_index if t.user_index >= 0 else last_user_index(state.messages)
            spec = ViewSpec("last_user", start, pivot, record.id)
        elif mode == "conversation":
            spec = ViewSpec("conversation", 0, pivot, record.id)
        else:  # none, summary
            spec = ViewSpec(mode, pivot, pivot, record.id)
        state.view = spec
        state.active_agent = target.name
        state.shared["handoff_context"] = context_json(record)
        if leg is not None:
            leg.handed(record, payload, route)
        t.emit("agent_handoff", {
            "source": record.source, "target": target.name, "reason": record.reason,
            "explanation": record.explanation, "record_id": record.id, "returns": False,
        })
        t.emit("agent_changed", {
            "agent": target.name, "previous": previous, "display_name": target.label,
            "icon": target.icon, "color": target.color,
        })

    def _recover(self, t: _Turn, leg: _Leg, fail: _Fail) -> _Transfer | None:
        """Hand a failure to the team's fallback, once per turn, or give up."""
        team = self.team
        fallback = team.fallback
        if (fallback is None or not fail.recoverable or t.recovered
                or fail.agent == fallback or leg.agent.name == fallback):
            return None
        target = team[fallback]
        if not target.enabled:
            return None
        t.recovered = True
        record = HandoffRecord(
            id=new_id(), source=leg.agent.name, target=fallback,
            reason=HandoffReason.ERROR_RECOVERY,
            explanation=f"{fail.agent} failed ({fail.code}): {fail.message}",
            at=time.time(), turn=t.state.turn,
            extra={"error": {"code": fail.code, "message": fail.message,
                             "agent": fail.agent}},
        )
        t.add_record(record)
        return _Transfer(None, record, target, None)

    # -- one agent at work -------------------------------------------------------------

    def _activation(self, t: _Turn, leg: _Leg) -> Awaitable[_Outcome]:
        """Let the leg's agent work until it answers, hands off or fails, within its timeout."""
        if leg.agent.timeout is None:
            return self._steps(t, leg)
        return self._timed_steps(t, leg)

    async def _timed_steps(self, t: _Turn, leg: _Leg) -> _Outcome:
        timeout = leg.agent.timeout
        assert timeout is not None
        try:
            return await asyncio.wait_for(self._steps(t, leg), timeout)
        except TimeoutError:
            return _Fail("timeout", f"{leg.agent.name} did not finish within {timeout:g} s.",
                         leg.agent.name)

    async def _steps(self, t: _Turn, leg: _Leg) -> _Outcome:
        while True:
            agent = leg.agent
            name = agent.name
            model = self._models[name]
            if model is None:
                return _Fail("no_model", f"{name} has no model and cannot answer here.",
                             name, recoverable=False)
            if t.steps >= self.max_steps:
                return _Fail(
                    "max_steps",
                    f"The turn reached max_steps ({self.max_steps} model calls) without an "
                    "answer.",
                    name, recoverable=False,
                )
            system = leg.system
            if system is None:
                system = await self._system(t, leg)
            request = ModelRequest(
                name, system, self._window(t, leg),
                leg.plan.specs if leg.plan.static else self._specs(leg.plan, self._ctx(t, leg)),
                agent.tool_choice, agent.model_settings or NO_SETTINGS,
            )
            t.steps += 1
            try:
                if t.streaming:
                    response = await self._call(t, model, request)
                else:
                    response = await model.complete(request)
            except ModelError as exc:
                return _Fail(exc.code, str(exc), name)
            except HandoffsError as exc:
                return _Fail(exc.code, str(exc), name, recoverable=False)
            except Exception as exc:
                return _Fail("model_error", f"{type(exc).__name__}: {exc}", name)
            if response.usage is not None:
                t.usage.add(response.usage)
                per = t.usage_by_agent.get(name)
                if per is None:
                    per = t.usage_by_agent[name] = Usage()
                per.add(response.usage)
            text = response.text
            if not response.tool_calls:
                if not text.strip():
                    self._append(t, leg, Note(EMPTY_RESPONSE_FEEDBACK, name, to_model=True))
                    continue
                self._append(t, leg, AssistantMessage(text, name))
                t.emit("message", {"agent": name, "text": text})
                return _Answer(text, name)
            if text:
                t.emit("message", {"agent": name, "text": text})
            outcome = await self._calls(t, leg, response)
            if outcome is not None:
                return outcome

    async def _call(self, t: _Turn, model: Model, request: ModelRequest) -> ModelResponse:
        if not t.streaming:
            return await model.complete(request)
        response: ModelResponse | None = None
        async for piece in model.stream(request):
            if isinstance(piece, TextDelta):
                t.emit("text_delta", {"agent": request.agent, "text": piece.text})
            else:
                response = piece
        if response is None:
            raise ModelError("The model's stream ended without a response.")
        return response

    def _ctx(self, t: _Turn, leg: _Leg) -> RunContext:
        ctx = leg.ctx
        if ctx is None:
            state = t.state
            ctx = leg.ctx = RunContext(state.id, leg.agent.name, state.turn, state.shared,
                                       t.context, leg.handoff, state.channel)
        return ctx

    def _window(self, t: _Turn, leg: _Leg) -> Window:
        if not leg.main:
            assert leg.base is not None
            return leg.base.extended(leg.rendered)
        state = t.state
        spec = state.view
        route = leg.route  # the route that opened the view, if it still exists
        history = route.handoff.history if route is not None else None
        custom = history if spec.mode == "custom" and callable(history) else None
        return views_of(state).window(state.messages, spec, custom)

    def _specs(self, plan: AgentPlan, ctx: RunContext) -> tuple[Any, ...]:
        specs = [tl.spec for tl in plan.tools.values()]
        for r in plan.routes.values():
            if r.target.enabled and _enabled(r.handoff, ctx):
                specs.append(r.spec)
        return tuple(specs)

    async def _system(self, t: _Turn, leg: _Leg) -> str:
        cached = leg.system
        if cached is not None:
            return cached
        agent = leg.agent
        instructions = agent.instructions
        if callable(instructions):
            value = instructions(self._ctx(t, leg))
            if inspect.isawaitable(value):
                value = await value
            return self._with_handoff(leg, str(value))
        leg.system = text = self._with_handoff(leg, instructions)
        return text

    def _with_handoff(self, leg: _Leg, text: str) -> str:
        """The agent's instructions plus what its handoff brings: note, source, summary."""
        record = leg.record
        if record is None:
            return text
        parts = [text] if text else []
        route = leg.route
        if route is not None and route.handoff.transfer_system_message:
            src = self.team.get(record.source)
            if src is not None and isinstance(src.instructions, str) and src.instructions:
                parts.append(f"# Instructions of {src.label} (transferred)\n"
                             f"{src.instructions}")
        parts.append(handoff_note(record, leg.payload))
        summary = leg.summary or record.summary
        if summary:
            parts.append(f"# Summary of the conversation so far\n{summary}")
        return "\n\n".join(parts)

    def _append(self, t: _Turn, leg: _Leg, message: Message) -> None:
        if leg.main:
            t.state.messages.append(message)
        else:
            leg.sub.append(message)
            r = render_full(message)
            if r is not None:
                leg.rendered.append(r)

    # -- a response with tool calls ----------------------------------------------------

    async def _calls(self, t: _Turn, leg: _Leg, response: ModelResponse) -> _Outcome | None:
        """Run ordinary tools, then decide handoffs; append the response and its results."""
        plan = leg.plan
        name = plan.agent.name
        calls = response.tool_calls
        n = len(calls)
        results: list[ToolResult | None] = [None] * n
        marks: list[HandoffMark | None] = [None] * n
        asks: list[HandoffAsk] = []
        ordinary: list[tuple[int, ToolCall, Tool]] = []
        for i, c in enumerate(calls):
            route = plan.routes.get(c.name)
            if route is not None:
                asks.append(HandoffAsk(i, c, route.target.name, route, _LLM))
            elif c.name in plan.tools:
                ordinary.append((i, c, plan.tools[c.name]))
            elif c.name.startswith("transfer_to_"):
                target = self._target_of(c.name)
                asks.append(HandoffAsk(i, c, target, plan.routes_by_target.get(target),
                                 _LLM))
            else:
                known = ", ".join(s.name for s in plan.specs) or "none"
                results[i] = ToolResult(
                    c.id, c.name, f"There is no tool named {c.name!r}. Available tools: "
                    f"{known}.", name, is_error=True)
                t.emit("tool_result", {"agent": name, "tool": c.name, "call_id": c.id,
                                       "text": results[i].text, "is_error": True})  # type: ignore[union-attr]
        escalate: _Fail | None = None
        if ordinary:
            outs = await self._run_tools(t, self._ctx(t, leg), name, ordinary)
            for (i, c, tl), (text, is_error, handoff_to) in zip(ordinary, outs, strict=True):
                if handoff_to is not None:
                    target = handoff_to.target
                    asks.append(HandoffAsk(i, c, target, plan.routes_by_target.get(target),
                                     _PROGRAMMATIC, handoff_to))
                    continue
                results[i] = ToolResult(c.id, c.name, text, name, is_error)
                if is_error and tl.on_error == "escalate" and escalate is None:
                    escalate = _Fail("tool_error", f"Tool {c.name!r} failed: {text}", name)
            asks.sort(key=lambda a: a.index)
        transfer: _Transfer | None = None
        if asks:
            transfer = await self._handoffs(t, leg, asks, results, marks)
        self._append(t, leg, AssistantMessage(response.text, name, tuple(
            c if marks[i] is None else ToolCall(c.id, c.name, c.arguments, marks[i])
            for i, c in enumerate(calls)
        )))
        for r in results:
            if r is not None:
                self._append(t, leg, r)
        if escalate is not None:
            return escalate
        return transfer

    def _target_of(self, tool_name: str) -> str:
        """The agent a `transfer_to_*` name points at, even if no route declares it."""
        for a in self.team.agents:
            if Handoff.default_tool_name(a.name) == tool_name:
                return a.name
        return tool_name.removeprefix("transfer_to_")

    async def _run_tools(self, t: _Turn, ctx: RunContext, agent: str,
                         calls: list[tuple[int, ToolCall, Tool]]
                         ) -> list[tuple[str, bool, HandoffTo | None]]:
        if len(calls) == 1:
            _, c, tl = calls[0]
            return [await self._run_tool(t, ctx, agent, c, tl)]
        return list(await asyncio.gather(
            *(self._run_tool(t, ctx, agent, c, tl) for _, c, tl in calls)))

    async def _run_tool(self, t: _Turn, ctx: RunContext, agent: str, c: ToolCall, tl: Tool
                        ) -> tuple[str, bool, HandoffTo | None]:
        t.emit("tool_called", {"agent": agent, "tool": c.name, "call_id": c.id,
                               "arguments": c.arguments})
        args, problem = parse_arguments(c.arguments)
        if problem is None:
            try:
                args = tl.parse(args)
            except validation_error() as exc:
                problem = (f"The arguments of {c.name!r} do not match its schema: "
                           f"{error_text(exc)}. Call it again with corrected arguments.")
        if problem is not None:
            t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                                   "text": problem, "is_error": True})
            return problem, True, None
        try:
            value = await tl.invoke(ctx, args)
        except Exception as exc:
            if tl.on_error == "raise":
                raise
            text = f"Tool {c.name!r} failed: {type(exc).__name__}: {exc}"
            t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                                   "text": text, "is_error": True})
            return text, True, None
        if isinstance(value, HandoffTo):
            return "", False, value
        text = render_result(value)
        t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                               "text": text, "is_error": False})
        return text, False, None

    async def _handoffs(self, t: _Turn, leg: _Leg, asks: list[HandoffAsk],
                        results: list[ToolResult | None], marks: list[HandoffMark | None]
                        ) -> _Transfer | None:
        """Decide every handoff request of one response. Delegations run (concurrently),
        then the first one-way request is validated; further one-way requests are refused."""
        name = leg.agent.name
        state = t.state
        policy = self.team.policy
        delegations: list[tuple[HandoffAsk, HandoffRecord, Any]] = []
        first_transfer: HandoffAsk | None = None
        transfer: _Transfer | None = None
        for ask in asks:
            t.emit("handoff_requested", {"agent": name, "target": ask.target,
                                         "tool": ask.call.name, "call_id": ask.call.id,
                                         "reason": ask.explanation})
            is_delegation = ask.route is not None and ask.route.handoff.returns
            if not is_delegation:
                if first_transfer is not None:
                    self._reject(t, leg, ask, results, marks, Rejection(
                        MULTIPLE_HANDOFFS,
                        f"Only one handoff per response: the handoff to "
                        f"{first_transfer.target!r} came first, so this one to "
                        f"{ask.target!r} was not made.",
                    ))
                    continue
                first_transfer = ask
            payload, payload_error = ask.payload_of()
            h = ask.route.handoff if ask.route is not None else None
            rejection = policy.check(
                self.team, name, ask.target, h, state, t.accepted, payload_error, leg.depth,
                h is None or h.enabled is True or _enabled(h, self._ctx(t, leg)))
            if rejection is not None:
                self._reject(t, leg, ask, results, marks, rejection)
                continue
            record = self._record(t, name, ask, payload, accepted=True)
            t.add_record(record)
            target = self.team[ask.target]
            if target.is_human and record.reason is _LLM:
                record.reason = HandoffReason.ESCALATION
            if is_delegation:
                delegations.append((ask, record, payload))
            else:
                transfer = _Transfer(ask.route, record, target, payload)
        if delegations:
            answers = await asyncio.gather(*(
                self._delegate(t, leg, ask.route, record, payload)  # type: ignore[arg-type]
                for ask, record, payload in delegations))
            for (ask, _, _), (text, fail) in zip(delegations, answers, strict=True):
                self._result_for(t, leg, ask, results, marks, text, fail is not None,
                                 "delegated")
        if transfer is not None:
            assert first_transfer is not None
            ask = first_transfer
            if transfer.route is not None and transfer.route.handoff.on_handoff is not None:
                await _call_hook(transfer.route, self._ctx(t, leg), transfer.payload)
            self._result_for(t, leg, ask, results, marks,
                             f"Transferred to {transfer.target.label}.", False, "transferred")
            if not leg.main:
                # Inside a delegation a transfer changes who answers the delegation.
                leg.switch(self.team.plan(transfer.target.name))
                leg.handed(transfer.record, transfer.payload, transfer.route)
                t.emit("agent_handoff", {
                    "source": name, "target": transfer.target.name,
                    "reason": transfer.record.reason,
                    "explanation": transfer.record.explanation,
                    "record_id": transfer.record.id, "returns": False})
                t.emit("agent_started", {"agent": transfer.target.name,
                                         "display_name": transfer.target.label})
                return None
        return transfer

    def _record(self, t: _Turn, source: str, ask: HandoffAsk, payload: Any, accepted: bool,
                rejection: Rejection | None = None) -> HandoffRecord:
        route = ask.route
        call = ask.call
        return HandoffRecord(
            new_id(), source, ask.target, ask.reason, ask.explanation,
            None if payload is None else payload_json(payload), accepted,
            rejection.code if rejection else None, rejection.message if rejection else "",
            time.time(), t.state.turn, call.name, call.id,
            route is not None and route.handoff.returns,
        )

    def _reject(self, t: _Turn, leg: _Leg, ask: HandoffAsk, results: list[ToolResult | None],
                marks: list[HandoffMark | None], rejection: Rejection) -> None:
        payload, _ = ask.payload_of()
        record = self._record(t, leg.agent.name, ask, payload, False, rejection)
        t.add_record(record)
        t.emit("handoff_rejected", {"agent": leg.agent.name, "target": ask.target,
                                    "code": rejection.code, "message": rejection.message,
                                    "record_id": record.id})
        self._result_for(t, leg, ask, results, marks, rejection.message, True, "rejected")

    def _result_for(self, t: _Turn, leg: _Leg, ask: HandoffAsk, results: list[ToolResult | None],
                    marks: list[HandoffMark | None], text: str, is_error: bool,
                    mark: HandoffMark) -> None:
        c = ask.call
        programmatic = ask.reason is _PROGRAMMATIC
        if not programmatic:
            marks[ask.index] = mark
        results[ask.index] = ToolResult(c.id, c.name, text, leg.agent.name, is_error,
                                        None if programmatic else mark)
        if programmatic:
            # The tool ran; its handoff is reported by agent_handoff / handoff_rejected.
            t.emit("tool_result", {"agent": leg.agent.name, "tool": c.name, "call_id": c.id,
                                   "text": text, "is_error": is_error})

    async def _delegate(self, t: _Turn, leg: _Leg, route: Route, record: HandoffRecord,
                        payload: Any, task: str | None = None) -> tuple[str, _Fail | None]:
        """Run a delegation to its answer: the text for the caller, and the failure if any.

        The delegate works on its own line: a fixed window of the conversation (through
        the route's history) followed by its own messages, which never enter the shared
        transcript. `task`, for plan steps, is given to it as a user message.
        """
        target = route.target
        t.emit("agent_handoff", {
            "source": record.source, "target": target.name, "reason": record.reason,
            "explanation": record.explanation, "record_id": record.id, "returns": True,
        })
        base = self._delegate_base(t, leg, route)
        sub = _Leg(self.team.plan(target.name), main=False, depth=leg.depth + 1, base=base)
        sub.handed(record, payload, route)
        if task is not None:
            self._append(t, sub, UserMessage(task, target.name))
        t.emit("agent_started", {"agent": target.name, "display_name": target.label})
        if route.handoff.on_handoff is not None:
            await _call_hook(route, self._ctx(t, sub), payload)
        if route.handoff.history == "summary":
            sub.summary = record.summary = await self._make_summary(t, leg, route)
        outcome: _Outcome | None = None
        if target.input_guardrails:
            outcome = await self._guardrails(
                t, sub, "input", task if task is not None else _turn_text(t))
        if outcome is None:
            coro = self._activation(t, sub)
            if route.handoff.timeout is not None:
                try:
                    outcome = await asyncio.wait_for(coro, route.handoff.timeout)
                except TimeoutError:
                    outcome = _Fail("timeout", f"{target.name} did not answer within "
                                    f"{route.handoff.timeout:g} s.", target.name)
            else:
                outcome = await coro
        if isinstance(outcome, _Answer):
            outcome = await self._guardrails(t, sub, "output", outcome.text) or outcome
        fail: _Fail | None = None
        if isinstance(outcome, _Answer):
            text = outcome.text
        elif isinstance(outcome, _Fail):
            fail = outcome
            text = f"{outcome.agent} could not answer ({outcome.code}): {outcome.message}"
            record.extra["error"] = {"code": outcome.code, "message": outcome.message,
                                     "agent": outcome.agent}
        else:  # a transfer out of a delegation to a human or a cold route
            text = f"{outcome.target.name} took the request over."
        record.extra["answer"] = text
        t.emit("agent_returned", {"source": sub.agent.name, "target": record.source,
                                  "record_id": record.id, "text": text, "ok": fail is None})
        return text, fail

    def _delegate_base(self, t: _Turn, leg: _Leg, route: Route) -> Window:
        """What a delegate sees of the conversation before its own work."""
        current = self._window(t, leg)
        mode = route.handoff.history
        if mode == "full":
            return current
        msgs = list(current)
        seq: list[Message]
        if callable(mode):
            seq = list(mode(msgs))
        elif mode == "conversation":
            seq = [c for c in map(render_conversation, msgs) if c is not None]
        elif mode == "last_user":
            seq = []
            for m in reversed(msgs):
                if isinstance(m, UserMessage):
                    seq.append(m)
                    break
        else:
            seq = []
        return Window(((seq, 0, len(seq)),))

    # -- guardrails, summaries ---------------------------------------------------------

    async def _guardrails(self, t: _Turn, leg: _Leg, stage: str, text: str) -> _Fail | None:
        """Run the leg's agent's own guardrails for `stage`; the first trip fails it."""
        agent = leg.agent
        checks = agent.input_guardrails if stage == "input" else agent.output_guardrails
        if not checks:
            return None
        ctx = self._ctx(t, leg)
        for g in checks:
            verdict = g(ctx, text)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict is None or verdict is True or (
                isinstance(verdict, GuardrailResult) and not verdict.tripped
            ):
                continue
            message = verdict.message if isinstance(verdict, GuardrailResult) else (
                f"{guardrail_name(g)} refused the {stage}.")
            t.emit("guardrail_tripped", {"agent": agent.name, "guardrail": guardrail_name(g),
                                         "stage": stage, "message": message})
            return _Fail("guardrail_tripped", message, agent.name)
        return None

    async def _make_summary(self, t: _Turn, leg: _Leg, route: Route) -> str:
        """Summarise what the source saw, once per handoff (stored on the record)."""
        from .summary import summarize

        summarizer = route.handoff.summarizer or self.team.summarizer
        messages = list(self._window(t, leg))
        fallback_model = self._models.get(route.source)
        return await summarize(summarizer, fallback_model, messages, route.source,
                               route.target.name)


# -- small pure helpers ---------------------------------------------------------------


def _enabled(h: Handoff, ctx: RunContext) -> bool:
    e = h.enabled
    return bool(e(ctx)) if callable(e) else e


async def _call_hook(route: Route | None, ctx: RunContext, payload: Any) -> None:
    if route is None or route.handoff.on_handoff is None:
        return
    value = route.handoff.on_handoff(ctx, payload)
    if inspect.isawaitable(value):
        await value


def _turn_text(t: _Turn) -> str:
    """The user's message of this turn (the one a handoff target inherits)."""
    messages = t.state.messages
    i = t.user_index if t.user_index >= 0 else last_user_index(messages)
    m = messages[i] if i < len(messages) else None
    return m.text if isinstance(m, UserMessage) else ""


def _last_text_of(messages: Sequence[Message], agent: str) -> str:
    """The text `agent` wrote in its latest response of this turn, if any."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, UserMessage):
            return ""
        if isinstance(m, AssistantMessage) and m.agent == agent:
            return m.text
    return ""


def _pending_message(state: SessionState) -> UserMessage | None:
    """The user message of an interrupted turn, if the last turn never finished."""
    if state.status not in ("running", "interrupted") or not state.messages:
        return None
    i = last_user_index(state.messages)
    if i >= len(state.messages):
        return None
    m = state.messages[i]
    return m if isinstance(m, UserMessage) else None


def _no_running_loop(what: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise HandoffsError(
        f"{what}() cannot run inside a running event loop; use 'await runner.run(...)'.",
        code="invalid_argument",
    )
