"""`handoffs chat`: talk to a team in a terminal and watch the conversation move.

Each line you type is one turn, streamed as it happens; lines starting with `/` are
commands (`/help`). After an escalation, `/operator` lets you answer as the person who
holds the conversation (each line is their reply, `runner.reply_as_human`) until
`/handback AGENT` gives it back to an AI agent. Ctrl-C during a turn stops showing it and
gives the prompt back (the turn itself finishes in the background, as every started turn
does, and its answer is kept in the session); Ctrl-C at the prompt clears the line; Ctrl-D
or `/quit` leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable

from ..errors import HandoffsError
from .render import EventPrinter, Painter, timeline_lines, transcript_lines
from .runners import Setup
from .turn import new_session_id

HELP = """commands:
  /agents          the team: who is active, who you can switch to
  /switch NAME     hand the conversation to NAME yourself (the policy applies)
  /history         the conversation so far
  /handoffs        every handoff of this session, with its reason
  /session         this session: id, store, active agent, turns
  /approve [ID]    let a tool call that waits for a person run (ID: when several wait)
  /reject [ID] [WHY]  refuse it; the agent reads why
  /operator        answer as the person who holds the conversation (again: as the user)
  /handback AGENT [MESSAGE]  as that person, hand the conversation back to AGENT
  /new             start a new session
  /quit            leave (or Ctrl-D)"""


async def interruptible(work: Awaitable[bool | None]) -> bool | None:
    """Await `work`; Ctrl-C raises KeyboardInterrupt out of it, at once.

    asyncio's own Ctrl-C handling (`asyncio.Runner`) runs its handler only when the event
    loop next wakes: a Ctrl-C that lands just as the loop goes to sleep waits for the next
    timer (a minute, for a slow model's call). A handler of the loop's own wakes it: the
    signal is written to a pipe the loop watches."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    stopped = False

    def on_ctrl_c() -> None:
        nonlocal stopped
        stopped = True
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_ctrl_c)
    except (NotImplementedError, RuntimeError, ValueError):  # no such handler here
        return await work
    try:
        return await work
    except asyncio.CancelledError:
        if not stopped or task.uncancel() > 0:
            raise
        raise KeyboardInterrupt from None
    finally:
        loop.remove_signal_handler(signal.SIGINT)


class Chat:
    """One terminal chat with a team, over one runner and one event loop."""

    def __init__(self, setup: Setup, session_id: str | None, painter: Painter,
                 read: Callable[[str], str] = input) -> None:
        self.setup = setup
        self.runner = setup.runner
        self.team = setup.runner.team
        self.session_id = session_id or new_session_id()
        self.p = painter
        self.out = EventPrinter(painter, human_hint="/operator to answer as them")
        self.read = read
        self.operator = False
        """True while the lines typed are the human operator's replies (`/operator`)."""

    def loop(self) -> int:
        """Read lines until /quit or end of input; 0 on a normal exit."""
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing and history for input())
        with asyncio.Runner() as aio:
            aio.run(self.banner())
            while True:
                try:
                    text = self.read(self.prompt()).strip()
                except EOFError:
                    self.out.line()
                    break
                except KeyboardInterrupt:
                    self.out.line(self.p.dim("  (Ctrl-D or /quit to leave)"))
                    continue
                if not text:
                    continue
                try:
                    if text.startswith("/"):
                        if not aio.run(interruptible(self.command(text))):
                            break
                    elif self.operator:
                        aio.run(interruptible(self.reply(text)))
                    else:
                        aio.run(interruptible(self.turn(text)))
                except KeyboardInterrupt:
                    stopped = aio.run(self.stop())
                    self.out.line(self.p.warn(
                        "  ^C: turn stopped; the session goes on." if stopped else
                        "  ^C: stopped showing this turn; its answer is in /history."))
                except HandoffsError as exc:
                    self.out.line(self.p.error(f"  {exc.code}: {exc}"))
            aio.run(self.runner.store.close())
        return 0

    def prompt(self) -> str:
        return f"[{self._active_label}] {'operator' if self.operator else 'you'}> "

    _active_label = ""

    async def banner(self) -> None:
        p = self.p
        names = ", ".join(p.agent(a.name) for a in self.team.agents)
        self.out.line(p.sgr("handoffs chat", "1") + f" with {names}")
        self.out.line(p.dim(f"model: {self.setup.model}"))
        if self.setup.offline:
            self.out.line(p.dim("  The offline model routes by keywords and answers from "
                                "templates; --model openai:gpt-4.1-mini (or HANDOFFS_MODEL) "
                                "for a real one."))
        state = await self.runner.get_session(self.session_id)
        if state is not None:
            self.out.line(p.dim(f"resuming session {self.session_id}: {len(state.messages)} "
                                f"messages, {state.turn} turns"))
        else:
            self.out.line(p.dim(f"session {self.session_id} in {self.setup.store}"))
        self.out.line(p.dim("/help for commands, /quit to leave"))
        await self._refresh()

    async def turn(self, text: str) -> None:
        async for event in self.runner.stream(self.session_id, text):
            self.out.show(event)
        self.out.end_stream()
        await self._refresh()

    async def decide(self, approved: bool, arg: str) -> None:
        """Approve or reject a waiting tool call; show the turn it continues.

        `arg` is `[ID] [WHY]`. The ID may be left out when exactly one call waits; an ID
        (or a first word that looks like one) that is not waiting is refused, so a typo
        never decides another call.
        """
        state = await self.runner.get_session(self.session_id)
        pending = state.pending if state is not None else None
        waiting = [] if pending is None else pending.undecided()
        tools = {} if pending is None else {c.id: c.name for c in pending.calls}
        verb = "approve" if approved else "reject"
        if not waiting:
            self.out.line(self.p.error(f"  nothing waits for approval in session "
                                       f"{self.session_id}"))
            return
        first, _, rest = arg.partition(" ")
        if first in waiting:
            call_id, reason = first, rest.strip()
        elif first and (approved or _looks_like_id(first)):
            listed = ", ".join(f"{c} ({tools.get(c, '?')})" for c in waiting)
            self.out.line(self.p.error(f"  no call {first!r} waits for approval; waiting: "
                                       f"{listed}"))
            return
        elif len(waiting) > 1:
            listed = ", ".join(f"{c} ({tools.get(c, '?')})" for c in waiting)
            self.out.line(self.p.error(f"  {len(waiting)} calls wait: name one, /{verb} ID"
                                       f"{' [WHY]' * (not approved)}; waiting: {listed}"))
            return
        else:  # one call waits and the words are the reason
            call_id, reason = waiting[0], arg
        if approved:
            result = await self.runner.approve(self.session_id, call_id)
        else:
            result = await self.runner.reject(self.session_id, call_id, reason)
        for event in result.events:
            self.out.show(event)
        self.out.end_stream()
        await self._refresh()

    async def take_over(self) -> None:
        """`/operator`: answer as the human agent that holds the session; again: as the
        user."""
        if self.operator:
            self.operator = False
            self.out.line(self.p.dim("  you type as the user again"))
            return
        human = await self._human()
        if human is None:
            return
        self.operator = True
        self.out.line(self.p.warn("  you answer as ") + self.p.agent(human) + self.p.warn(
            ": each line is their reply; /handback AGENT gives the conversation back, "
            "/operator types as the user again"))

    async def reply(self, text: str) -> None:
        """A line typed in operator mode: the human agent's reply."""
        if await self._human() is None:
            self.operator = False
            return
        result = await self.runner.reply_as_human(self.session_id, text)
        for event in result.events:
            self.out.show(event)
        self.out.end_stream()

    async def hand_back(self, arg: str) -> None:
        """`/handback AGENT [MESSAGE]`: the human hands the conversation to an AI agent."""
        if not arg:
            self.out.line(self.p.error("  /handback AGENT [MESSAGE]: name the agent that "
                                       "takes the conversation back (/agents lists them)"))
            return
        human = await self._human()
        if human is None:
            return
        words = arg.split(" ")
        target, text = words[0], " ".join(words[1:])
        for i in range(len(words), 0, -1):  # the longest start that names an agent
            named = self._agent_named(" ".join(words[:i]))
            if named in self.team:
                target, text = named, " ".join(words[i:])
                break
        label = self.team[target].label if target in self.team else target
        try:
            result = await self.runner.reply_as_human(
                self.session_id, text.strip() or f"I'm handing you back to {label}.",
                handoff_to=target)
        except HandoffsError as exc:
            self.out.line(self.p.error(f"  ✗ hand-back to {target} refused ({exc.code}): "
                                       f"{exc}"))
            return
        self.operator = False
        for event in result.events:
            self.out.show(event)
        self.out.line(self.p.dim(f"  {label} answers the user's next message; you type as "
                                 "the user again"))
        await self._refresh()

    async def _human(self) -> str | None:
        """The human agent holding the session, or None (and why, printed)."""
        state = await self.runner.get_session(self.session_id)
        active = (state.active_agent if state else None) or self.team.entry
        if active in self.team and self.team[active].is_human:
            return active
        self.out.line(self.p.error(
            f"  no person holds this conversation ({self.p.agent(active)} does); /operator "
            "works after a handoff to a human agent (an escalation, or /switch to one)"))
        return None

    async def stop(self) -> bool:
        """Stop the running turn (`runner.cancel`) and wait until it is stored."""
        stopped = self.runner.cancel(self.session_id)
        await self.runner.wait_for_turns()
        return stopped

    async def command(self, line: str) -> bool:
        """Do one slash command; False means leave."""
        name, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        if name in ("quit", "exit", "q"):
            return False
        if name == "help":
            self.out.line(HELP)
        elif name == "agents":
            await self.agents()
        elif name == "switch":
            await self.switch(arg)
        elif name == "history":
            state = await self.runner.get_session(self.session_id)
            lines = transcript_lines(self.p, state.messages) if state else []
            self._print(lines or ["  (no messages yet)"])
        elif name == "handoffs":
            state = await self.runner.get_session(self.session_id)
            lines = timeline_lines(self.p, state.handoffs) if state else []
            self._print(lines or ["  (no handoffs yet)"])
        elif name == "session":
            await self.session()
        elif name in ("approve", "reject"):
            await self.decide(name == "approve", arg)
        elif name == "operator":
            await self.take_over()
        elif name == "handback":
            await self.hand_back(arg)
        elif name == "new":
            self.session_id = new_session_id()
            self.out.line(self.p.dim(f"new session {self.session_id}"))
            await self._refresh()
        else:
            self.out.line(self.p.error(f"  unknown command /{name}; /help lists them"))
        return True

    async def agents(self) -> None:
        state = await self.runner.get_session(self.session_id)
        active = (state.active_agent if state else None) or self.team.entry
        for a in self.team.agents:
            flags = [f for f, on in (
                ("entry", a.name == self.team.entry), ("fallback", a.name == self.team.fallback),
                ("supervisor", a.name == self.team.supervisor), ("human", a.is_human),
                ("not selectable", not a.user_selectable), ("system only", a.system_only),
                ("disabled", not a.enabled)) if on]
            mark = "●" if a.name == active else " "
            extra = self.p.dim(f" [{', '.join(flags)}]") if flags else ""
            about = f" — {a.description}" if a.description else ""
            self.out.line(f" {mark} {self.p.agent(a.name)} ({a.name}){about}{extra}")

    async def switch(self, arg: str) -> None:
        if not arg:
            self.out.line(self.p.error("  /switch NAME: name an agent (/agents lists them)"))
            return
        name = self._agent_named(arg)
        try:
            record = await self.runner.select_agent(self.session_id, name)
        except HandoffsError as exc:
            self.out.line(self.p.error(f"  ✗ switch to {name} refused ({exc.code}): {exc}"))
            return
        self.out.line(self.p.warn("  → ") + f"you hand the conversation to "
                      f"{self.p.agent(record.target)} " + self.p.warn("(user_request)"))
        if self.team[record.target].is_human:
            self.out.line(self.p.warn("  … a person holds the conversation now; "
                                      "/switch to an AI agent to go on here"))
        await self._refresh()

    async def session(self) -> None:
        state = await self.runner.get_session(self.session_id)
        lines = [f"session {self.session_id}", f"store   {self.setup.store}",
                 f"model   {self.setup.model}"]
        if state is None:
            lines.append("(nothing said yet)")
        else:
            accepted = sum(1 for r in state.handoffs if r.accepted)
            lines += [f"active  {state.active_agent}", f"status  {state.status}",
                      f"turns   {state.turn}, messages {len(state.messages)}, "
                      f"handoffs {accepted}"]
        self._print(lines)

    def _agent_named(self, arg: str) -> str:
        """An agent's name from its name or display name, any case; else `arg` unchanged."""
        wanted = arg.casefold()
        for a in self.team.agents:
            if wanted in (a.name.casefold(), a.label.casefold()):
                return a.name
        return arg

    def _print(self, lines: list[str]) -> None:
        for line in lines:
            self.out.line(line)

    async def _refresh(self) -> None:
        state = await self.runner.get_session(self.session_id)
        name = (state.active_agent if state else None) or self.team.entry
        look = self.p.look(name)
        self._active_label = f"{look.icon} {look.label}" if look.icon else look.label


def _looks_like_id(word: str) -> bool:
    """Whether a word typed after /reject is meant as a call's id (`call_8f2`, `rule_5`,
    `toolu_01`), not the first word of a reason: ids have an underscore or a digit."""
    return "_" in word or any(ch.isdigit() for ch in word)
