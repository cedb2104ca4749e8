"""How the CLI shows agents, events, transcripts and handoffs in a terminal.

Colours are ANSI escapes (24-bit for an agent's `color`), on only for a terminal and
never when `NO_COLOR` is set, so piped output stays plain text.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

from ..core.events import Event
from ..core.handoff import HandoffRecord
from ..core.messages import AssistantMessage, Message, Note, ToolResult, UserMessage
from ..core.team import Team

_FALLBACK_COLORS = ("#2563eb", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2")


def use_color(stream: IO[str], disabled: bool = False) -> bool:
    """Whether to paint: a terminal, no `--no-color`, no NO_COLOR in the environment."""
    return not disabled and "NO_COLOR" not in os.environ and stream.isatty()


@dataclass(slots=True, frozen=True)
class Look:
    """How one agent is shown: its display name, icon and colour."""

    label: str
    icon: str
    color: str


class Painter:
    """Paints text for one output stream, and knows how each agent of a team looks."""

    def __init__(self, team: Team | None, color: bool) -> None:
        self.color = color
        self.looks: dict[str, Look] = {}
        if team is not None:
            for a in team.agents:
                self.looks[a.name] = Look(a.label, a.icon or "", a.color or _color_for(a.name))

    def look(self, name: str) -> Look:
        look = self.looks.get(name)
        if look is None:
            look = self.looks[name] = Look(name, "", _color_for(name))
        return look

    def agent(self, name: str) -> str:
        """The agent as people see it: icon and display name, in its colour."""
        look = self.look(name)
        text = f"{look.icon} {look.label}" if look.icon else look.label
        return self.rgb(text, look.color, bold=True)

    def rgb(self, text: str, color: str, bold: bool = False) -> str:
        rgb = _hex(color)
        if not self.color or rgb is None:
            return self.sgr(text, "1") if bold else text
        return f"\033[{'1;' if bold else ''}38;2;{rgb[0]};{rgb[1]};{rgb[2]}m{text}\033[0m"

    def sgr(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def dim(self, text: str) -> str:
        return self.sgr(text, "2")

    def warn(self, text: str) -> str:
        return self.sgr(text, "33")

    def error(self, text: str) -> str:
        return self.sgr(text, "31")


class EventPrinter:
    """Prints a turn's events as they come: who speaks, every handoff and why.

    Streamed text (`text_delta`) is printed as it arrives after the speaker's name; the
    `message` event then only ends the line. Without deltas the whole message is printed.
    """

    def __init__(self, painter: Painter, out: IO[str] | None = None,
                 tools: bool = True, human_hint: str = "runner.reply_as_human") -> None:
        self.p = painter
        self.out = out or sys.stdout
        self.tools = tools
        self.human_hint = human_hint
        """How a person answers, shown when a human agent takes the conversation."""
        self.streaming: str | None = None
        """The agent whose streamed text is on the current line, if any."""
        self.streamed: set[str] = set()
        self.said: dict[str, str] = {}
        """Each agent's last message, so a delegate's answer is not printed twice."""

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def line(self, text: str = "") -> None:
        self.end_stream()
        self.write(text + "\n")

    def end_stream(self) -> None:
        if self.streaming is not None:
            self.streaming = None
            self.write("\n")

    def show(self, e: Event) -> None:
        d = e.data
        t = e.type
        p = self.p
        if t == "text_delta":
            if not d["text"]:
                return
            if self.streaming != d["agent"]:
                self.end_stream()
                self.write(f"{p.agent(d['agent'])}: ")
                self.streaming = d["agent"]
                self.streamed.add(d["agent"])
            self.write(d["text"])
        elif t == "message":
            self.said[d["agent"]] = d["text"]
            if d["agent"] in self.streamed:
                self.end_stream()
                self.streamed.discard(d["agent"])
            else:
                self.line(f"{p.agent(d['agent'])}: {d['text']}")
        elif t == "agent_handoff":
            verb = "asks" if d["returns"] else "hands off to"
            why = f": {d['explanation']}" if d["explanation"] else ""
            self.line(p.warn("  → ") + f"{p.agent(d['source'])} {verb} "
                      f"{p.agent(d['target'])} " + p.warn(f"({d['reason']}){why}"))
        elif t == "agent_returned":
            self.streamed.discard(d["source"])
            shown = self.said.pop(d["source"], None) == d["text"]
            self.line(p.warn("  ← ") + f"{p.agent(d['source'])} answers "
                      f"{p.agent(d['target'])}" + ("" if shown else f": {d['text']}"))
        elif t == "handoff_rejected":
            self.line(p.error(f"  ✗ handoff from {d['agent']} to {d['target']} refused "
                              f"({d['code']}): {d['message']}"))
        elif t == "tool_called" and self.tools:
            self.line(p.dim(f"  · {d['agent']} calls {d['tool']}({d['arguments']})"))
        elif (t == "tool_result" and self.tools and not d.get("is_error")
              and not d["tool"].startswith("transfer_to_")):
            self.line(p.dim(f"  · {d['tool']} → {_short(d['text'])}"))
        elif t == "guardrail_checked" and self.tools:
            self.line(p.dim(f"  · guardrail {d['name']} ({d['stage']}) of {d['agent']}: "
                            + ("passed" if d["passed"] else "tripped")
                            + (f" ({d['reasoning']})" if d.get("reasoning") else "")))
        elif t == "guardrail_tripped" and d.get("reply") is not None:
            self.line(p.warn(f"  ⊘ guardrail {d['guardrail']} refused the {d['stage']} "
                             f"for {d['agent']}: {d['message']}"))
        elif t == "tool_progress" and self.tools:
            self.line(p.dim(f"  ⋯ {d['tool']}: {d['message']}"))
        elif t == "custom_event" and self.tools:
            self.line(p.dim(f"  ◆ {d['tool']} sent {d['name']}: "
                            f"{_short(json.dumps(d['data'], ensure_ascii=False))}"))
        elif t == "guardrail_tripped":
            self.line(p.error(f"  ✗ guardrail {d['guardrail']} stopped {d['agent']} "
                              f"({d['stage']}): {d['message']}"))
        elif t == "human_waiting":
            self.line(p.warn("  … waiting for ") + p.agent(d["agent"]) +
                      p.warn(f": a person answers ({self.human_hint})"))
        elif t == "approval_requested":
            self.line(p.warn("  ⏸ ") + p.agent(d["agent"]) + p.warn(
                f" wants to call {d['tool']}({d['arguments']}): /approve {d['call_id']} "
                "or /reject it"))
        elif t == "approval_decided":
            self.line(p.dim(f"  {'✓ approved' if d['approved'] else '✗ rejected'} "
                            f"{d['tool']}" + (f": {d['reason']}" if d["reason"] else "")))
        elif t == "plan_step_started":
            self.line(p.dim(f"  ▸ step {d['step']}: {d['agent']} — {d['task']}"))
        elif t == "run_completed" and d["status"] == "handed_off":
            self.line(p.warn(f"  ⇢ {d['output']} (") + p.agent(d["agent"]) +
                      p.warn(" answers your next message)"))
        elif t == "run_failed":
            self.line(p.error(f"  ✗ the turn failed ({d['code']}): {d['message']}"))


def event_json(e: Event) -> str:
    """One event as one line of JSON (`--json`)."""
    return json.dumps(e.to_dict(), ensure_ascii=False, default=str)


def transcript_lines(p: Painter, messages: Iterable[Message]) -> list[str]:
    """The conversation as people read it: user text, answers, tool traffic, notes."""
    lines: list[str] = []
    for m in messages:
        if isinstance(m, UserMessage):
            lines.append(p.sgr("you", "1;36") + p.dim(f" (to {m.agent})") + f": {m.text}")
        elif isinstance(m, AssistantMessage):
            if m.text:
                lines.append(f"{p.agent(m.agent)}: {m.text}")
            for c in m.tool_calls:
                if c.handoff is None:
                    lines.append(p.dim(f"  · {m.agent} calls {c.name}({c.arguments})"))
        elif isinstance(m, ToolResult):
            if m.handoff is None:
                lines.append(p.dim(f"  · {m.name} → {_short(m.text)}"))
            elif m.handoff == "delegated":
                lines.append(p.dim(f"  ← {m.name}: {_short(m.text)}"))
        elif isinstance(m, Note):
            lines.append(p.dim(f"  [{m.text}]"))
    return lines


def timeline_lines(p: Painter, records: Iterable[HandoffRecord]) -> list[str]:
    """Every handoff request in order: when, who to whom, why, accepted or refused."""
    lines: list[str] = []
    for r in records:
        at = time.strftime("%H:%M:%S", time.localtime(r.at)) if r.at else "--:--:--"
        arrow = "⇄" if r.returns else "→"
        head = f"{at} turn {r.turn}  {p.agent(r.source)} {arrow} {p.agent(r.target)}"
        why = f": {r.explanation}" if r.explanation else ""
        if r.accepted:
            lines.append(f"{head}  {p.warn(r.reason.value)}{why}")
        else:
            lines.append(f"{head}  " + p.error(f"refused ({r.rejection}): {r.message}"))
    return lines


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _color_for(name: str) -> str:
    return _FALLBACK_COLORS[zlib.crc32(name.encode()) % len(_FALLBACK_COLORS)]


def _hex(color: str) -> tuple[int, int, int] | None:
    c = color.lstrip("#")
    if len(c) == 3:
        c = "".join(ch * 2 for ch in c)
    try:
        value = int(c, 16)
    except ValueError:
        return None
    if len(c) != 6:
        return None
    return (value >> 16) & 255, (value >> 8) & 255, value & 255


__all__ = ["EventPrinter", "Look", "Painter", "event_json", "timeline_lines",
           "transcript_lines", "use_color"]
