"""One played turn: what happened (from the turn's events and result), and whether it is
what the case expected."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.events import Event
from .cases import CaseTurn
from .recording import ModelCall
from .symptoms import NONE, Symptoms

FAILED = "(failed)"
"""The matrix's column for turns that failed: no agent answered."""

ROUTING_STATUSES = ("handed_off", "waiting_for_human")
"""Expected statuses that say where the conversation went (a transfer, a person): routing
labels, which an evaluation without routes (the single-agent baseline) does not check."""


@dataclass(slots=True)
class TurnResult:
    """One turn of one case as played, and how it compares with the case's labels."""

    case: str
    """The case's id."""
    play: int
    """Which repetition (0 for the first; `repeat=N` plays every case N times)."""
    index: int
    """The turn's position in the case (0 for the first message)."""
    user: str
    expected: tuple[str, ...]
    """The agents whose answer is right."""
    agent: str | None
    """The agent that answered (or holds the conversation); None when the turn raised."""
    status: str
    """`completed`, `handed_off`, `waiting_for_human`, `waiting_for_approval`, `failed`,
    or `error` (the run raised instead of returning a result)."""
    output: str = ""
    error: str | None = None
    """The code of a failed turn (`max_steps`, `model_error`...), or of what was raised."""
    error_message: str = ""
    path: list[str] = field(default_factory=list)
    """The agents the conversation moved through: the one that received the message,
    then each one-way handoff's target."""
    kind: str | None = None
    """The kind of the handoff that brought the answering agent (None: no handoff)."""
    payload: Any = None
    """That handoff's payload."""
    tools: list[str] = field(default_factory=list)
    """Tools called (or put to a person for approval), any agent, in order."""
    refusals: list[dict[str, Any]] = field(default_factory=list)
    """Refused handoffs (`agent`, `target`, `code`, `message`) and refused tool calls
    (`agent`, `tool`, `code`, `message`), in order."""
    refused_by: str | None = None
    """The guardrail whose reply answered the turn (`RunResult.refused`); None: none."""
    calls: list[ModelCall] = field(default_factory=list)
    """Every model request of the turn and its answer (a guardrail's `ctx.ask` too)."""
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    """Each expectation the turn missed, in words; empty: the turn passed."""
    answer_problems: list[str] = field(default_factory=list)
    """The problems about the answer, whoever gave it (the turn failed, a tool was or was
    not called, a `completed` / `waiting_for_approval` status missed): the labels a team
    and a single agent are both judged on."""
    symptoms: Symptoms = NONE
    """What went wrong besides who answered (phantom handoffs, bounces, repeated calls,
    last-word answers, no_progress: `eval.symptoms`)."""

    @property
    def passed(self) -> bool:
        """Every expectation of the case's turn held."""
        return not self.problems

    @property
    def answered_right(self) -> bool:
        """Every label about the answer held (`answer_problems` is empty)."""
        return not self.answer_problems

    @property
    def routed(self) -> bool:
        """An expected agent answered and the turn did not fail (the rest not checked)."""
        return self.agent in self.expected and self.status not in ("failed", "error")

    @property
    def answered_by(self) -> str:
        """The matrix's column: the answering agent, or `(failed)`."""
        if self.status in ("failed", "error") or self.agent is None:
            return FAILED
        return self.agent

    def to_dict(self, detail: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "case": self.case, "play": self.play, "turn": self.index + 1, "user": self.user,
            "expected": list(self.expected), "agent": self.agent, "status": self.status,
            "passed": self.passed, "routed": self.routed, "problems": self.problems,
            "error": self.error, "path": self.path, "kind": self.kind,
            "tools": self.tools, "refusals": self.refusals, "model_calls": len(self.calls),
            "seconds": round(self.seconds, 4), "output": self.output,
            "answered_right": self.answered_right, "symptoms": self.symptoms.counts()}
        if self.refused_by is not None:
            d["refused_by"] = self.refused_by
        if detail:
            d["error_message"] = self.error_message
            d["payload"] = self.payload
            d["calls"] = [c.to_dict() for c in self.calls]
        return d


def grouped_refusals(refusals: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Refusals with identical neighbours merged: (how many in a row, the refusal)."""
    out: list[tuple[int, dict[str, Any]]] = []
    for r in refusals:
        if out and out[-1][1] == r:
            out[-1] = (out[-1][0] + 1, r)
        else:
            out.append((1, r))
    return out


def observe(t: TurnResult, events: list[Event], records: dict[str, Any]) -> None:
    """Fill what happened in the turn from its events (and its handoff records by id)."""
    moved_by: dict[str, Any] | None = None
    for e in events:
        d = e.data
        if e.type == "run_started" or e.type == "agent_changed":
            t.path.append(d["agent"])
        elif e.type == "agent_handoff" and not d["returns"]:
            moved_by = d
        elif e.type == "tool_called" or (e.type == "approval_requested"
                                         and not d.get("client")):  # (its tool_called counts)
            t.tools.append(d["tool"])
        elif e.type == "handoff_rejected":
            t.refusals.append({"agent": d["agent"], "target": d["target"], "code": d["code"],
                               "message": d["message"]})
        elif e.type == "tool_result" and d.get("code"):
            t.refusals.append({"agent": d["agent"], "tool": d["tool"], "code": d["code"],
                               "message": d["text"]})
    if moved_by is not None and moved_by["target"] == t.agent:
        t.kind = moved_by["reason"]
        record = records.get(moved_by["record_id"])
        t.payload = getattr(record, "payload", None)


def judge(t: TurnResult, expect: CaseTurn, routing: bool = True) -> None:
    """Write in `t.problems` each of `expect`'s labels that the played turn missed, and
    in `t.answer_problems` those about the answer. `routing=False` (a player without
    routes) checks only the answer's labels."""
    failed = t.status in ("failed", "error")
    head = [f"the turn failed ({t.error}): {t.error_message}".rstrip(":. ")] if failed else []
    answer = [f"{name} was not called" for name in expect.tools_called
              if name not in t.tools]
    answer += [f"{name} was called" for name in expect.tools_not_called if name in t.tools]
    if expect.refused_by is not None and t.refused_by != expect.refused_by and not failed:
        answer.append(f"not refused by {expect.refused_by}" if t.refused_by is None else
                      f"refused by {t.refused_by}, expected {expect.refused_by}")
    elif expect.refused_by is None and t.refused_by is not None:
        answer.append(f"refused by {t.refused_by}, expected an answer")
    status = expect.status
    ended: list[str] = []
    if status is not None and t.status != status and not failed:
        ended = [f"ended {t.status}, expected {status}"]
    routed = _routing_problems(t, expect) if routing else []
    if status in ROUTING_STATUSES:
        t.answer_problems[:] = head + answer
        t.problems[:] = head + routed + answer + (ended if routing else [])
    else:
        t.answer_problems[:] = head + answer + ended
        t.problems[:] = head + routed + answer + ended


def _routing_problems(t: TurnResult, expect: CaseTurn) -> list[str]:
    p: list[str] = []
    if t.agent not in expect.agents:
        p.append(f"answered by {t.agent or 'nobody'}, expected {' or '.join(expect.agents)}")
    if expect.path is not None and tuple(t.path) != expect.path:
        p.append(f"path {' → '.join(t.path) or '(none)'}, expected "
                 f"{' → '.join(expect.path)}")
    if expect.no_handoff and len(t.path) > 1:
        p.append(f"handed off ({' → '.join(t.path)}), expected no handoff")
    if expect.kind is not None and t.kind != expect.kind:
        p.append(f"handoff kind {t.kind or '(no handoff)'}, expected {expect.kind}")
    if expect.payload_keys is not None:
        have = set(t.payload) if isinstance(t.payload, dict) else set()
        missing = [k for k in expect.payload_keys if k not in have]
        if missing:
            p.append(f"payload lacks {', '.join(missing)}")
    return p
