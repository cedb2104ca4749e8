"""How a neutral view is replayed to a provider: every call paired with its result.

An agent's view may start anywhere (with an assistant message, a tool result, or
nothing at all), may hold messages of several agents and providers, and may hold
consecutive user-role items. Providers reject most of that: a tool result whose call is
not in the request, a call whose result is missing, ids in another provider's alphabet.
`provider_items` turns any view into a sequence that is valid by construction; each adapter then
only translates it into its own wire shapes.

The rules (the same for every provider):
- A tool result whose call is not in view (or was already answered) becomes user text:
  the model still learns what the tool said, and no provider sees an orphan result.
- A call with no result in view gets a synthetic error result, `NO_RESULT`, so that every
  call is answered immediately after the response that made it.
- Accepted one-way handoff calls and their results are never replayed (the target gets a
  note at the handoff instead); notes not meant for models are dropped.
- Refused handoff calls are replayed in the turn they were made (the refusal is the
  model's feedback), not in later turns: a model shown its old refusals hands off less.
  The records and events keep them.
- Blank user text and empty assistant messages are dropped.
- Tool names of replayed calls go through `core.names.tool_name`, the function that
  names the tools themselves, so a call and its tool carry the same name on the wire
  (and a made-up name like `multi_tool_use.parallel` becomes a valid one).
- Ids are made safe and unique per request by `CallIds`, deterministically, so the same
  history always renders the same request (which keeps provider prompt caches warm).
- A response's reasoning state (`AssistantMessage.reasoning`) stays with its exchange;
  each adapter sends back only its own family's parts (`own_reasoning`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.messages import (
    AssistantMessage,
    Message,
    Note,
    Reasoning,
    ToolCall,
    ToolResult,
    UserMessage,
)

NO_RESULT = "(no result: the call was not answered)"
"""The result given to a call whose result is not in the agent's view."""

CONTINUE = "(continue)"
"""User text sent where a provider needs a user turn and the view has none there."""

_SAFE = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(slots=True, frozen=True)
class UserText:
    """User-role text: a user's message, runtime feedback, or an orphan result."""

    text: str


@dataclass(slots=True)
class Exchange:
    """One assistant response and the results of its calls, one per call, in call order."""

    text: str
    agent: str
    calls: tuple[ToolCall, ...] = ()
    results: list[ToolResult] = field(default_factory=list)
    reasoning: tuple[Reasoning, ...] = ()
    """The response's reasoning state, of whichever provider made it."""


Item = UserText | Exchange


def provider_items(messages: Sequence[Message]) -> list[Item]:
    """The view as user text and exchanges, with every call answered exactly once."""
    items: list[Item] = []
    open_: Exchange | None = None
    answers: dict[str, ToolResult] = {}
    current = _turn_start(messages)

    def close() -> None:
        nonlocal open_
        if open_ is not None:
            ex = open_
            ex.results = [answers.get(c.id) or ToolResult(c.id, c.name, NO_RESULT, ex.agent,
                                                          is_error=True)
                          for c in ex.calls]
            answers.clear()
            open_ = None

    for i, m in enumerate(messages):
        earlier = i < current
        if isinstance(m, AssistantMessage):
            close()
            calls = tuple(c for c in m.tool_calls if c.handoff != "transferred"
                          and not (earlier and c.handoff == "rejected"))
            if not calls and not m.text.strip():
                continue
            ex = Exchange(m.text, m.agent, calls, reasoning=m.reasoning)
            items.append(ex)
            if calls:
                open_ = ex
        elif isinstance(m, ToolResult):
            if m.handoff == "transferred" or (earlier and m.handoff == "rejected"):
                continue
            if (open_ is not None and m.call_id not in answers
                    and any(c.id == m.call_id for c in open_.calls)):
                answers[m.call_id] = m
                continue
            close()
            items.append(UserText(orphan_text(m)))
        elif isinstance(m, UserMessage | Note):
            if isinstance(m, Note) and not m.to_model:
                continue
            if not m.text.strip():
                continue
            close()
            items.append(UserText(m.text))
    close()
    return items


def own_reasoning(parts: Sequence[Reasoning], origin: str, model: str
                  ) -> tuple[Reasoning, ...]:
    """The parts an adapter of family `origin` on `model` may send back: its family's,
    made by the same model when the part names one. Another provider's parts are dropped
    (they mean nothing to it, and most APIs refuse them)."""
    return tuple(r for r in parts
                 if r.origin == origin and (r.model is None or r.model == model))


def _turn_start(messages: Sequence[Message]) -> int:
    """Where the latest turn starts in the view (its user message); before it, refused
    handoff calls are not replayed."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], UserMessage):
            return i
    return 0


def orphan_text(r: ToolResult) -> str:
    """How a tool result whose call is not in view is shown to a model, as user text."""
    label = "error" if r.is_error else "result"
    return f"[{label} of an earlier {r.name} call] {r.text}"


def arguments_object(raw: str) -> dict[str, Any]:
    """The call's arguments as a JSON object; `{}` when the model's text was not one
    (the call's result already told the model what was wrong with it)."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):  # RecursionError: nested too deeply to read
        return {}
    return value if isinstance(value, dict) else {}


class CallIds:
    """Provider-safe call ids for one request, the same for the same history.

    Ids are kept when they already fit `^[a-zA-Z0-9_-]+$` and `max_len`; otherwise they
    become `call_<hash>`. An id seen a second time (some local servers number calls from
    zero in every response) gets a suffix, since providers need ids unique per request.
    """

    __slots__ = ("_max", "_used")

    def __init__(self, max_len: int = 64) -> None:
        self._max = max_len
        self._used: set[str] = set()

    def __call__(self, raw: str) -> str:
        cid = raw if raw and not _SAFE.search(raw) and len(raw) <= self._max else (
            "call_" + hashlib.sha256(raw.encode()).hexdigest()[: min(24, self._max - 5)])
        if cid in self._used:
            base = cid[: self._max - 6]
            n = 2
            while f"{base}_{n}" in self._used:
                n += 1
            cid = f"{base}_{n}"
        self._used.add(cid)
        return cid
