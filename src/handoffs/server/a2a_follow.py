"""An A2A task follows its session: the session's events written onto the task in the
protocol's terms (`TaskFeed`), during the turn a message runs and after it, while the
task waits for input (`Followers`).

A task that ends `input-required` (a person holds the conversation, or a call waits for
a person's approval) stays open on the a2a-sdk's side, and a follower keeps writing what
happens on the session onto it: the operator's reply (an artifact named after the human
agent), a hand-back (a `working` status naming who answers now, then `completed`), an
approval's outcome (a `working` status saying what was decided, the answer it led to,
then the task's new state). So `SubscribeToTask` and `GetTask` show them as they happen,
whoever made them (the operator's API, the page, another process over the relay).

A delegate's answer is the delegating agent's material, never the user's answer: it is
not an artifact but a `working` status saying who answered whom (`metadata.delegate`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from ..core.events import TERMINAL_EVENTS
from . import customer
from .service import Service

log = logging.getLogger("handoffs.server.a2a")

WAITING = frozenset(("waiting_for_human", "waiting_for_approval"))
"""Session statuses in which its A2A task is `input-required`."""


class TaskFeed:
    """Writes one session's events onto one A2A task (an a2a-sdk `TaskUpdater` on the
    task's event queue)."""

    def __init__(self, queue: Any, task_id: str, session_id: str) -> None:
        from a2a.server.tasks import TaskUpdater

        self.queue = queue
        self.task_id = task_id
        self.session_id = session_id
        self.up = TaskUpdater(queue, task_id, session_id)
        self.last = -1
        """The number of the last session event written (-1: none)."""
        self.delegates: list[str] = []
        """The agents answering a delegation now, innermost last."""
        self.news = False
        """True when something was written since the task's state was last set."""

    def say(self, text: str, agent: str | None = None) -> Any:
        """A message of the agent on this task (a status's message)."""
        from a2a.helpers.proto_helpers import new_text_message

        m = new_text_message(text, context_id=self.session_id, task_id=self.task_id)
        if agent is not None:
            m.metadata.update({"agent": agent})
        return m

    async def status(self, state: Any, text: str, agent: str | None = None,
                     **meta: Any) -> None:
        """Set the task's state with a message."""
        if agent is not None:
            meta["agent"] = agent
        await self.up.update_status(state, self.say(text, agent), metadata=meta or None)

    async def event(self, event: dict[str, Any]) -> None:
        """Write one session event (as its JSON data) onto the task."""
        from a2a.helpers.proto_helpers import new_text_part
        from a2a.types import TaskState

        seq = event.get("seq")
        if isinstance(seq, int) and seq > self.last:
            self.last = seq
        kind = event["type"]
        working = TaskState.TASK_STATE_WORKING
        if kind == "agent_handoff" and event.get("returns"):
            self.delegates.append(str(event["target"]))
        elif kind == "agent_returned":
            source = str(event["source"])
            if source in self.delegates:
                self.delegates.remove(source)
            await self.status(working, f"{source} answered {event['target']}.", source,
                              delegate=True, to=event["target"])
        elif kind == "message":
            agent = str(event["agent"])
            if agent in self.delegates:  # its caller's material, not the user's answer
                return
            await self.up.add_artifact([new_text_part(event["text"])], name=agent,
                                       metadata={"agent": agent})
            self.news = True
        elif kind == "agent_changed":
            agent = str(event["agent"])
            if agent in self.delegates:
                return
            await self.status(working, f"{event.get('display_name') or agent} answers now.",
                              agent)
            self.news = True
        elif kind == "approval_decided":
            word = "approved" if event.get("approved") else "rejected"
            reason = event.get("reason") or ""
            await self.status(working, f"The call {event.get('tool')} was {word}."
                              + (f" {reason}" if reason else ""), str(event.get("agent")),
                              approved=bool(event.get("approved")),
                              call_id=event.get("call_id"))
            self.news = True

    async def ended(self, status: str, agent: str, code: str | None = None,
                    message: str | None = None) -> bool:
        """Set the task's state from how a turn ended (its `RunStatus` value); True when
        the task stays open (`input-required`)."""
        from a2a.types import TaskState

        self.news = False
        meta = {"agent": agent, "status": status}
        if status in ("completed", "handed_off"):
            await self.up.complete()
            return False
        if status == "waiting_for_human":
            await self.status(TaskState.TASK_STATE_INPUT_REQUIRED,
                              f"{agent} (a person) answers here next.", **meta)
            return True
        if status == "waiting_for_approval":
            await self.status(TaskState.TASK_STATE_INPUT_REQUIRED,
                              "A call waits for a person's approval.", **meta)
            return True
        # A customer's copy: a stable code and a sentence, never the internal text.
        said = customer.error(code)
        await self.status(TaskState.TASK_STATE_FAILED, said["message"], **meta,
                          code=said["code"])
        return False

    async def settled(self, event: dict[str, Any]) -> bool:
        """The task's state from a turn's terminal event; True when it stays open."""
        return await self.ended(str(event.get("status")), str(event.get("agent")),
                                event.get("code"), event.get("message"))


class Followers:
    """The tasks of this process that follow their session between messages, one per
    session: a newer message (or task) on the session takes over from the older."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def stop(self, session_id: str) -> None:
        """Stop following the session (a message now speaks for itself)."""
        task = self._tasks.pop(session_id, None)
        if task is not None:
            task.cancel()

    def start(self, feed: TaskFeed) -> None:
        """Follow the session onto `feed`'s task until the task ends."""
        sid = feed.session_id
        self.stop(sid)
        task = asyncio.get_running_loop().create_task(self._run(feed))
        self._tasks[sid] = task

        def done(t: asyncio.Task[None]) -> None:
            if self._tasks.get(sid) is t:
                del self._tasks[sid]

        task.add_done_callback(done)

    async def _run(self, feed: TaskFeed) -> None:
        try:
            await follow(self.service, feed, stay=True)
        except asyncio.CancelledError:
            raise
        except Exception:  # the task stays as it was; the session is untouched
            log.exception("session %s: A2A task %s stopped following it",
                          feed.session_id, feed.task_id)

    async def close(self) -> None:
        """Stop every follower (the server shuts down)."""
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t


async def follow(svc: Service, feed: TaskFeed, stay: bool) -> bool:
    """Write the session's events after `feed.last` onto the task until its state is
    settled: the task ended (False), or it waits for input (True) and `stay` is False.
    With `stay`, a task that waits goes on following (an operator's reply leaves it
    waiting, with the reply as an artifact; a hand-back completes it)."""
    from a2a.types import TaskState

    sub = await svc.hub.subscribe(feed.session_id, feed.last)
    try:
        while True:
            event = await sub.queue.get()
            if event is None:  # dropped by the hub: fell too far behind
                return True
            await feed.event(event)
            if event["type"] in TERMINAL_EVENTS:
                if not await feed.settled(event):
                    return False
                if not stay:
                    return True
                continue
            if not sub.queue.empty():
                continue
            state = await svc.store.load(feed.session_id)
            status = state.status if state is not None else "idle"
            if status == "idle":  # a hand-back: the agent answers the next message
                await feed.up.complete()
                return False
            if status in WAITING and feed.news:  # an operator's reply
                await feed.status(TaskState.TASK_STATE_INPUT_REQUIRED,
                                  f"{state.active_agent} (a person) answered; "
                                  "reply on this task." if status == "waiting_for_human"
                                  else "A call waits for a person's approval.",
                                  state.active_agent if state is not None else None,
                                  status=status)
                feed.news = False
    finally:
        svc.hub.unsubscribe(sub)
