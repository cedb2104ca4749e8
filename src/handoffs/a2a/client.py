"""One message to a remote agent over A2A, with the a2a-sdk's own client: the card (given,
or read once per URL), the message sent (streamed when both sides can), the task's status
updates and artifacts read into a `RemoteReply`; the streamed text handed to `on_text` as
it comes. Every failure is a `HandoffsError` with a stable code:

- `remote_unreachable`: no connection, no card (or none within the timeout);
- `remote_timeout`: the agent took the message but did not answer within the agent's
  `timeout`; its task, when the answer had named it, is cancelled (`CancelTask`, best
  effort), so it does not run on for nobody;
- `remote_rejected`: the agent refused the request (a JSON-RPC error, an HTTP 4xx);
- `remote_failed`: the agent broke (an HTTP 5xx, an answer that is not A2A).

A task that ends `failed`, `canceled` or `rejected` is not an exception here: it is the
reply's state, and the decisions (`runtime.decisions.remote`) make it the agent's failure.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.remote import TOKEN_FIELD, RemoteAgent, RemoteReply, RemoteRequest
from ..errors import HandoffsError
from .cards import CARD_PATH, sdk

if TYPE_CHECKING:
    from a2a.types import AgentCard, Part, StreamResponse

log = logging.getLogger("handoffs.a2a")

_cards: dict[str, AgentCard] = {}
"""Cards read at a first call (a `RemoteAgent` built with a description), or parsed from a
`RemoteAgent(card=...)`, by URL."""
_tls: list[Any] = []
"""The TLS context every call's HTTP client shares: making one costs tens of
milliseconds, more than a whole exchange with a nearby agent."""


async def send(agent: RemoteAgent, request: RemoteRequest,
               on_text: Callable[[str], None] | None = None) -> RemoteReply:
    """Send `request` to `agent` and read its answer to the end of the exchange (the task
    completed, failed, or waiting for input)."""
    sdk()
    import httpx
    from a2a.client import (
        A2AClientError,
        A2AClientTimeoutError,
        AgentCardResolutionError,
        ClientConfig,
        create_client,
    )
    from a2a.utils.errors import A2AError

    name = agent.name
    headers = dict(agent.headers)
    if request.token:
        headers["Authorization"] = f"Bearer {request.token}"
    reading = _Reading(on_text)
    client: Any = None
    try:
        if not _tls:
            _tls.append(httpx.create_ssl_context())
        async with httpx.AsyncClient(headers=headers, timeout=agent.remote_timeout,
                                     verify=_tls[0]) as http:
            try:
                async with asyncio.timeout(agent.remote_timeout):
                    card = await _card(agent, http)
                    client = await create_client(
                        card, ClientConfig(httpx_client=http, streaming=agent.streaming))
                    async for event in client.send_message(_message(request)):
                        reading.add(event)
                    return reading.reply()
            except (TimeoutError, A2AClientTimeoutError) as exc:
                if client is None:  # not even its card in time
                    raise _error("remote_unreachable", name, f"no card within "
                                 f"{agent.remote_timeout:g} s", exc) from exc
                what = f"did not answer within {agent.remote_timeout:g} s"
                if reading.task_id is not None:
                    await _cancel(client, reading.task_id, name)
                    what += f"; its task {reading.task_id} was cancelled"
                raise _error("remote_timeout", name, what, exc) from exc
    except HandoffsError:
        raise
    except AgentCardResolutionError as exc:
        raise _error("remote_unreachable", name, f"its card could not be read: {exc}",
                     exc) from exc
    except A2AClientError as exc:
        cause = exc.__cause__
        if isinstance(cause, httpx.HTTPStatusError):
            status = cause.response.status_code
            code = "remote_failed" if status >= 500 else "remote_rejected"
            raise _error(code, name, f"HTTP {status}", exc) from exc
        if isinstance(cause, httpx.RequestError):
            raise _error("remote_unreachable", name, f"{type(cause).__name__}: {cause}",
                         exc) from exc
        raise _error("remote_failed", name, str(exc), exc) from exc
    except A2AError as exc:  # the agent's JSON-RPC error: it refused the request
        raise _error("remote_rejected", name, f"{type(exc).__name__}: {exc}", exc) from exc
    except httpx.RequestError as exc:
        raise _error("remote_unreachable", name, f"{type(exc).__name__}: {exc}",
                     exc) from exc
    except (ValueError, KeyError) as exc:
        raise _error("remote_failed", name, f"its answer is not A2A: {exc}", exc) from exc


CANCEL_TIMEOUT = 5.0
"""Seconds a CancelTask for a task that took too long may take."""


async def _cancel(client: Any, task_id: str, agent: str) -> None:
    """Ask the remote agent to cancel a task nobody waits for any more (best effort: a
    refusal or no answer is logged, never raised)."""
    from a2a.types import CancelTaskRequest

    try:
        async with asyncio.timeout(CANCEL_TIMEOUT):
            await client.cancel_task(CancelTaskRequest(id=task_id))
    except Exception as exc:  # the timeout is the error that matters
        log.warning("remote agent %s: task %s could not be cancelled (%s: %s)", agent,
                    task_id, type(exc).__name__, exc)


def _error(code: str, agent: str, what: str, exc: BaseException) -> HandoffsError:
    log.warning("remote agent %s: %s (%s)", agent, code, what)
    words = {"remote_unreachable": "could not be reached",
             "remote_timeout": "timed out",
             "remote_rejected": "refused the request",
             "remote_failed": "failed"}[code]
    return HandoffsError(f"Remote agent {agent!r} {words}: {what}.", code=code)


async def _card(agent: RemoteAgent, http: Any) -> AgentCard:
    from a2a.client import A2ACardResolver
    from a2a.client.card_resolver import parse_agent_card

    card = _cards.get(agent.url)
    if card is None:
        card = (parse_agent_card(dict(agent.card)) if agent.card is not None
                else await A2ACardResolver(http, agent.url, CARD_PATH).get_agent_card())
        _cards[agent.url] = card
    return card


def _message(request: RemoteRequest) -> Any:
    from a2a.helpers.proto_helpers import new_data_part, new_text_part
    from a2a.types import Message, Role, SendMessageRequest

    parts = [new_text_part(request.text)]
    if request.data is not None:
        parts.append(new_data_part(dict(request.data)))
    message = Message(role=Role.ROLE_USER, parts=parts, message_id=request.message_id,
                      context_id=request.context_id, task_id=request.task_id or "")
    return SendMessageRequest(message=message)


def state_name(state: int) -> str:
    """An A2A task state in the protocol's words: `TASK_STATE_INPUT_REQUIRED` ->
    `input-required`."""
    from a2a.types import TaskState

    name: str = TaskState.Name(state)
    return name.removeprefix("TASK_STATE_").lower().replace("_", "-")


def parts_text(parts: Any) -> str:
    """The text of message or artifact parts: text as it is, data as JSON."""
    out: list[str] = []
    for p in parts:
        out.append(_part_text(p))
    return "".join(out)


def _part_text(part: Part) -> str:
    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped,unused-ignore]

    if part.HasField("text"):
        return str(part.text)
    if part.HasField("data"):
        return json.dumps(MessageToDict(part.data), ensure_ascii=False)
    if part.HasField("url"):
        return str(part.url)
    return ""


class _Reading:
    """A remote agent's events, read into its reply: the task's id and latest state, its
    artifacts by id (chunks appended), the latest status message."""

    __slots__ = ("artifacts", "on_text", "said", "state", "status_text", "streamed",
                 "task_id", "token")

    def __init__(self, on_text: Callable[[str], None] | None) -> None:
        self.on_text = on_text
        self.task_id: str | None = None
        self.state = "submitted"
        self.artifacts: dict[str, str] = {}
        self.status_text = ""
        self.said: str | None = None  # a plain message answer (no task)
        self.streamed = False
        self.token: str | None = None

    def add(self, event: StreamResponse) -> None:
        kind = event.WhichOneof("payload")
        if kind == "message":
            self.said = parts_text(event.message.parts)
            self.state = "completed"
        elif kind == "task":
            task = event.task
            self.task_id = task.id or None
            if TOKEN_FIELD in task.metadata:
                self.token = str(task.metadata[TOKEN_FIELD])
            self._status(task.status)
            for a in task.artifacts:
                self.artifacts[a.artifact_id] = parts_text(a.parts)
        elif kind == "status_update":
            self.task_id = event.status_update.task_id or self.task_id
            self._status(event.status_update.status)
        elif kind == "artifact_update":
            up = event.artifact_update
            self.task_id = up.task_id or self.task_id
            a = up.artifact
            text = parts_text(a.parts)
            before = self.artifacts.get(a.artifact_id)
            if up.append and before is not None:
                self.artifacts[a.artifact_id] = before + text
            else:
                if self.artifacts and self.on_text is not None and text:
                    self.on_text("\n")
                self.artifacts[a.artifact_id] = text
            if self.on_text is not None and text:
                self.streamed = True
                self.on_text(text)

    def _status(self, status: Any) -> None:
        self.state = state_name(status.state)
        if status.HasField("message"):
            self.status_text = parts_text(status.message.parts)

    def reply(self) -> RemoteReply:
        if self.said is not None:
            text = self.said
        else:
            text = "\n".join(t for t in self.artifacts.values() if t) or self.status_text
        if text and not self.streamed and self.on_text is not None:
            self.on_text(text)
        return RemoteReply(self.state, text, self.task_id, self.token)
