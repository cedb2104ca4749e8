"""Labelled conversations: what the user says, turn by turn, and who should answer.

A case file is JSON Lines (one case an object a line; blank lines and lines starting with
`#` are skipped) or YAML (a list of cases, or `{cases: [...]}`; needs PyYAML:
`pip install 'handoffs[eval]'`). A case:

    {"id": "refund-en", "tags": ["en"], "turns": [
        {"user": "I was charged twice for A-1001", "agent": "refunds",
         "path": ["triage", "billing", "refunds"], "payload_keys": ["order_id", "amount"]},
        {"user": "Thanks! That's all.", "agent": "refunds", "no_handoff": true,
         "tools_not_called": ["issue_refund"]}]}

A turn a guardrail must refuse (answer with its reply) names it: `{"user": "Write me a
poem", "agent": "triage", "refused_by": "relevance"}`; a turn without `refused_by` must not
be refused.

A case of one turn may put the turn's fields at the top level:
`{"id": "hello", "user": "Hi!", "agent": "triage", "no_handoff": true}`.
"""

from __future__ import annotations

import difflib
import importlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.handoff import HandoffReason
from ..core.team import Team
from ..errors import HandoffsError

TURN_KEYS = ("user", "agent", "path", "kind", "payload_keys", "no_handoff", "tools_called",
             "tools_not_called", "status", "refused_by")
CASE_KEYS = ("id", "turns", "tags", "notes")
STATUSES = ("completed", "handed_off", "waiting_for_human", "waiting_for_approval")
"""The statuses a turn may be expected to end with (a failed turn never passes)."""


class CaseError(HandoffsError):
    """A case file that cannot be read as cases: where, and what to fix."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="invalid_case")


@dataclass(slots=True, frozen=True)
class CaseTurn:
    """One user message and what should happen to it."""

    user: str
    """The user's message."""
    agents: tuple[str, ...]
    """The agents whose answer is right (one, or a set for an ambiguous message)."""
    path: tuple[str, ...] | None = None
    """The agents the conversation must pass through in this turn, from the one that
    received the message to the one that answers (None: any path)."""
    kind: str | None = None
    """The kind (`HandoffReason`) of the handoff that brought the answering agent, e.g.
    `llm` or `escalation` (None: not checked)."""
    payload_keys: tuple[str, ...] | None = None
    """Keys the payload of that handoff must have (None: not checked)."""
    no_handoff: bool = False
    """True: the agent that received the message answers it itself (no accepted move)."""
    tools_called: tuple[str, ...] = ()
    """Tools some agent must call in this turn."""
    tools_not_called: tuple[str, ...] = ()
    """Tools no agent may call (or ask a person to approve) in this turn: a "thanks,
    that's all" must not move money."""
    status: str | None = None
    """How the turn must end: `completed`, `handed_off`, `waiting_for_human`,
    `waiting_for_approval` (None: any status but failed)."""
    refused_by: str | None = None
    """The guardrail (by name) whose reply must answer this turn (`RunResult.refused`);
    None: the turn must not be refused."""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"user": self.user,
                             "agent": self.agents[0] if len(self.agents) == 1
                             else list(self.agents)}
        if self.path is not None:
            d["path"] = list(self.path)
        if self.kind is not None:
            d["kind"] = self.kind
        if self.payload_keys is not None:
            d["payload_keys"] = list(self.payload_keys)
        if self.no_handoff:
            d["no_handoff"] = True
        if self.tools_called:
            d["tools_called"] = list(self.tools_called)
        if self.tools_not_called:
            d["tools_not_called"] = list(self.tools_not_called)
        if self.status is not None:
            d["status"] = self.status
        if self.refused_by is not None:
            d["refused_by"] = self.refused_by
        return d


@dataclass(slots=True, frozen=True)
class Case:
    """A labelled conversation: an id, its turns in order, tags to group results by."""

    id: str
    turns: tuple[CaseTurn, ...]
    tags: tuple[str, ...] = ()
    """Free labels (`fr`, `ambiguous`, `out_of_scope`, `multi_turn`...); reports count
    accuracy per tag, and `handoffs eval --tag` runs a subset."""
    notes: str = ""
    """Free text for the person who reads or edits the case."""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id}
        if self.tags:
            d["tags"] = list(self.tags)
        if self.notes:
            d["notes"] = self.notes
        d["turns"] = [t.to_dict() for t in self.turns]
        return d


def load_cases(path: str | Path) -> list[Case]:
    """The cases of a `.jsonl` file (or `.yaml` / `.yml`, with PyYAML installed).

    Raises `CaseError` (code `invalid_case`) naming the file, the line or case, and what
    to fix, for anything that is not a well-formed case: unknown keys are refused (a
    misspelt `agnet` must not silently pass).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError(f"No case file {str(path)!r} (looked at {p.resolve()}).") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(f"Cannot read {path}: {exc}") from exc
    if p.suffix.lower() in (".yaml", ".yml"):
        return parse_yaml(text, str(path))
    return parse_jsonl(text, str(path))


def parse_jsonl(text: str, source: str = "<cases>") -> list[Case]:
    """Cases from JSON Lines text; `source` names it in errors."""
    raw: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            raw.append((f"{source}:{number}", json.loads(stripped)))
        except json.JSONDecodeError as exc:
            raise CaseError(f"{source}:{number}: not JSON ({exc.msg} at column "
                            f"{exc.colno}); each line holds one case object.") from None
    return parse_cases(raw)


def parse_yaml(text: str, source: str = "<cases>") -> list[Case]:
    """Cases from YAML text: a list of cases, or a mapping with a `cases` list."""
    try:
        yaml: Any = importlib.import_module("yaml")
    except ImportError:
        raise HandoffsError(f"{source}: YAML case files need PyYAML: pip install "
                            "'handoffs[eval]' (or write the cases as JSON Lines, which "
                            "need nothing).", code="missing_dependency") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CaseError(f"{source}: not valid YAML: {exc}") from None
    if isinstance(data, Mapping) and "cases" in data:
        data = data["cases"]
    if not isinstance(data, list):
        raise CaseError(f"{source}: a YAML case file is a list of cases (or `cases:` "
                        "followed by one).")
    return parse_cases((f"{source} case {i}", item) for i, item in enumerate(data, 1))


def parse_cases(items: Iterable[tuple[str, Any]]) -> list[Case]:
    """Cases from `(where, object)` pairs; ids must be unique."""
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for where, item in items:
        case = parse_case(item, where)
        if case.id in seen:
            raise CaseError(f"{where}: the id {case.id!r} is already used at "
                            f"{seen[case.id]}; case ids must be unique.")
        seen[case.id] = where
        cases.append(case)
    return cases


def parse_case(item: Any, where: str = "case") -> Case:
    """One case from its JSON object (see the module's docstring)."""
    if not isinstance(item, Mapping):
        raise CaseError(f"{where}: a case is an object with id and turns (or user and "
                        f"agent), not {type(item).__name__}.")
    case_id = item.get("id")
    if not isinstance(case_id, str) or not case_id.strip():
        raise CaseError(f"{where}: every case needs an `id` (a non-empty string).")
    where = f"{where} ({case_id})"
    if "turns" in item:
        _unknown(item, CASE_KEYS, where)
        turns = item["turns"]
        if not isinstance(turns, list) or not turns:
            raise CaseError(f"{where}: `turns` is a non-empty list of turns.")
        parsed = tuple(_turn(t, f"{where} turn {i}") for i, t in enumerate(turns, 1))
    else:
        _unknown(item, CASE_KEYS + TURN_KEYS, where)
        parsed = (_turn({k: v for k, v in item.items() if k in TURN_KEYS}, where),)
    tags = _strings(item.get("tags", []), "tags", where)
    notes = item.get("notes", "")
    if not isinstance(notes, str):
        raise CaseError(f"{where}: `notes` is a string.")
    return Case(case_id, parsed, tags, notes)


def dump_jsonl(cases: Sequence[Case]) -> str:
    """Cases as JSON Lines text, one case a line (non-ASCII kept as it is)."""
    return "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in cases)


def _turn(item: Any, where: str) -> CaseTurn:
    if not isinstance(item, Mapping):
        raise CaseError(f"{where}: a turn is an object with `user` and `agent`.")
    _unknown(item, TURN_KEYS, where)
    user = item.get("user")
    if not isinstance(user, str) or not user.strip():
        raise CaseError(f"{where}: `user` (the user's message) must be a non-empty string.")
    if "agent" not in item:
        raise CaseError(f"{where}: `agent` (who should answer: a name, or a list of "
                        "acceptable names) is missing.")
    agents = _strings(item["agent"], "agent", where)
    if not agents:
        raise CaseError(f"{where}: `agent` names at least one agent.")
    path = _strings(item["path"], "path", where) if item.get("path") is not None else None
    if path is not None and (not path or path[-1] not in agents):
        raise CaseError(f"{where}: `path` must end with the answering agent "
                        f"({' or '.join(agents)}), not {path[-1] if path else 'nothing'}.")
    kind = item.get("kind")
    if kind is not None and kind not in set(HandoffReason):
        raise CaseError(f"{where}: unknown kind {kind!r}; one of "
                        f"{', '.join(r.value for r in HandoffReason)}.")
    status = item.get("status")
    if status is not None and status not in STATUSES:
        raise CaseError(f"{where}: unknown status {status!r}; one of {', '.join(STATUSES)}.")
    keys = item.get("payload_keys")
    no_handoff = item.get("no_handoff", False)
    if not isinstance(no_handoff, bool):
        raise CaseError(f"{where}: `no_handoff` is true or false.")
    if no_handoff and (kind is not None or keys is not None or (path and len(path) > 1)):
        raise CaseError(f"{where}: `no_handoff` cannot go with a kind, payload keys or a "
                        "path of more than one agent.")
    return CaseTurn(
        user=user, agents=agents, path=path, kind=kind,
        payload_keys=_strings(keys, "payload_keys", where) if keys is not None else None,
        no_handoff=no_handoff,
        tools_called=_strings(item.get("tools_called", []), "tools_called", where),
        tools_not_called=_strings(item.get("tools_not_called", []), "tools_not_called",
                                  where),
        status=status, refused_by=_refused_by(item.get("refused_by"), where))


def _refused_by(value: Any, where: str) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    raise CaseError(f"{where}: `refused_by` is the name of the guardrail that must refuse "
                    "the message (a string).")


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise CaseError(f"{where}: `{key}` is a string or a list of strings.")


def _unknown(item: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    for key in item:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise CaseError(f"{where}: unknown key {key!r}{hint}; a case takes "
                            f"{', '.join(CASE_KEYS)} and a turn {', '.join(TURN_KEYS)}.")


def check_cases(cases: Sequence[Case], team: Team) -> None:
    """Refuse cases that name agents or tools `team` does not have (a typo would make a
    case fail for the wrong reason), with every such name in one error."""
    agents = {a.name for a in team.agents}
    tools = {t.name for a in team.agents for t in a.tools}
    # An MCP server's tools are known only once it is connected: no check of tool names.
    check_tools = not any(a.mcp for a in team.agents)
    problems: list[str] = []
    for case in cases:
        for i, turn in enumerate(case.turns, 1):
            for name in (*turn.agents, *(turn.path or ())):
                if name not in agents:
                    problems.append(f"{case.id} turn {i}: no agent {name!r}")
            for name in (*turn.tools_called, *turn.tools_not_called):
                if check_tools and name not in tools:
                    problems.append(f"{case.id} turn {i}: no tool {name!r}")
    if problems:
        shown = "; ".join(dict.fromkeys(problems))
        raise CaseError(f"The cases do not fit the team ({shown}). Its agents: "
                        f"{', '.join(sorted(agents))}; its tools: "
                        f"{', '.join(sorted(tools)) or 'none'}.")
