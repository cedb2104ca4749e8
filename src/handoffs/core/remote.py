"""RemoteAgent: a team member that runs elsewhere and is reached over the Agent2Agent
protocol (A2A), and the two plain values a call to it is made of (`RemoteRequest`,
`RemoteReply`). Data only: the call itself is an effect (`runtime.effects`, through
`handoffs.a2a.client`), what it means for the turn a decision (`runtime.decisions.remote`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .agent import Agent

INTERRUPTED = frozenset(("input-required", "auth-required"))
"""A2A task states in which the task waits for the client: its id is kept in the session."""
TOKEN_FIELD = "handoffs_session_token"
"""The task metadata field in which a team served over A2A (`handoffs serve --a2a`) gives
a new conversation's session token, once: in the first task of the answer to the message
that started it, to that caller only (the stored task never holds it); a `RemoteAgent`
keeps it and presents it after."""


@dataclass(slots=True, frozen=True, init=False)
class RemoteAgent(Agent):
    """A team member reached over A2A through its agent card
    (`<url>/.well-known/agent-card.json`). It can be the target of a one-way transfer
    (it then answers the user's messages until someone hands the conversation on, sticky
    like any agent) and of a delegation (`Handoff(..., returns=True)`: its answer comes
    back to the caller). It has no model, tools or routes of its own here: the remote
    side decides how it answers.

    `RemoteAgent("billing", "https://billing.example.com")` reads the card once, when it
    is built, for what the team needs to know before any call: the description (what
    handoff tools that target it say) and the skills (its `capabilities`). Give
    `description=` (or `card=`) to build it without reaching the remote side; the card
    is then read at the first call. Needs the `a2a` extra.
    """

    url: str = ""
    """The agent's base URL: its card is at `/.well-known/agent-card.json` under it."""
    card: Mapping[str, Any] | None = None
    """The agent card as JSON data (read from `url` when neither it nor a description
    was given); None: read at the first call."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """HTTP headers sent with every request to it (an `Authorization` the card asks for)."""
    remote_timeout: float = 60.0
    """Seconds one call to it may take (card, message and its stream), else
    `remote_timeout` (its task cancelled), or `remote_unreachable` when not even its card
    came in time."""
    streaming: bool = True
    """Ask for a stream when the card says it can (its text becomes `text_delta` events);
    False: one request, one answer."""

    def __init__(self, name: str, url: str, description: str | None = None, *,
                 card: Mapping[str, Any] | None = None,
                 headers: Mapping[str, str] | None = None, timeout: float = 60.0,
                 streaming: bool = True, capabilities: Sequence[str] | None = None,
                 **agent: Any) -> None:
        """`name`: its name in the team; `url`: its base URL; `description`: what it is
        for (None: the card's); `card`: its card, when already at hand; `headers`: sent
        with every request; `timeout`: seconds per call; `capabilities`: None: the ids
        and tags of the card's skills. Other keywords are `Agent`'s (display_name, icon,
        color, channels, user_selectable, system_only, enabled)."""
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            from ..errors import TeamError

            raise TeamError(f"RemoteAgent {name!r} needs an http(s) URL, got {url!r}.")
        if card is None and description is None:
            from ..a2a.cards import fetch_card

            card = fetch_card(url, headers or {}, timeout, name)
        if description is None:
            description = str((card or {}).get("description", ""))
        if capabilities is None:
            capabilities = skill_names(card or {})
        Agent.__init__(self, name=name, description=description,
                       capabilities=tuple(capabilities), **agent)
        for attr, value in (("url", url.rstrip("/")), ("card", card),
                            ("headers", dict(headers or {})), ("remote_timeout", timeout),
                            ("streaming", streaming)):
            object.__setattr__(self, attr, value)

    is_remote: ClassVar[bool] = True
    """Always True: its answers come from the remote agent, over A2A."""


def skill_names(card: Mapping[str, Any]) -> list[str]:
    """What a card's skills say the agent can do: each skill's id and tags, once each."""
    out: list[str] = []
    for skill in card.get("skills") or ():
        for name in (skill.get("id"), *(skill.get("tags") or ())):
            if isinstance(name, str) and name and name not in out:
                out.append(name)
    return out


@dataclass(slots=True, frozen=True)
class RemoteRequest:
    """One message to a remote agent: the A2A message the decisions made of the agent's
    view (`runtime.decisions.remote`)."""

    agent: str
    """The remote agent's name in the team."""
    context_id: str
    """The A2A context: the session's id."""
    task_id: str | None
    """The task it continues (one waiting for input); None: a new task."""
    text: str
    """The message's text part: the user's latest message, or a delegation's task."""
    data: Mapping[str, Any] | None = None
    """The message's data part: the handoff (source, reason, kind, payload) and the
    earlier conversation as the route's history view shows it; None: none (a continued
    task: the remote side has its history)."""
    message_id: str = ""
    """The A2A message id (the executor's id, so a replay sends the same)."""
    token: str | None = None
    """The bearer token the remote side gave this context (`TOKEN_FIELD`), sent as
    `Authorization`; None: the agent's own `headers` only."""


@dataclass(slots=True, frozen=True)
class RemoteReply:
    """What a remote agent answered: where its task stands and what it said."""

    state: str
    """The A2A task state, in the protocol's words: `completed`, `input-required`,
    `auth-required`, `failed`, `canceled`, `rejected` (`completed` for a plain message)."""
    text: str
    """Its text: the artifacts' text, else the status message's (data parts as JSON)."""
    task_id: str | None = None
    """The task's id (None: the agent answered with a message, no task)."""
    token: str | None = None
    """A session token the remote side gave for this context (`TOKEN_FIELD`), if any."""
