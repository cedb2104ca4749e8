"""A worker's settings for the activities its workflows schedule (`TemporalOptions`), and
the workers of this process by task queue (what a workflow finds its team and runner
through: a workflow object is made by Temporal, not by us)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime.runner import Runner


@dataclass(slots=True, frozen=True)
class TemporalOptions:
    """Timeouts and retries of the activities a session's workflow schedules. Every
    worker of one task queue should be given the same."""

    model_timeout: float = 300.0
    """Seconds one attempt of a model call may take. Its retries follow the model's own
    `RetryPolicy` (`max_retries`, `base_delay`, `max_delay`), as Temporal's retry policy."""
    tool_timeout: float = 600.0
    """Seconds one attempt of a tool call may take, unless `tool_timeouts` names it or the
    tool sets its own (`@tool(timeout=...)`)."""
    tool_timeouts: Mapping[str, float] = field(default_factory=dict)
    """Per tool name: seconds one attempt of that tool may take."""
    tool_attempts: int = 3
    """How often a tool call is tried when its worker dies or it times out (a tool's
    own exception is never retried: it is the model's feedback, as in process)."""
    heartbeat_timeout: float = 30.0
    """Seconds without a heartbeat after which a running model or tool call's worker
    counts as dead and the call goes to another worker; a running call beats every
    third of it."""
    store_timeout: float = 60.0
    """Seconds one store load or commit may take (retried while the store is down)."""
    local_store: bool = True
    """Loads and commits as local activities: run by the worker that runs the workflow
    task, recorded without a round trip through the server's queues (three of a simple
    turn's five activities). False: ordinary activities, any worker runs them."""
    turns_per_run: int = 1
    """Updates one workflow run handles before it continues as new (sooner when Temporal
    suggests it); the session lives in the store, so nothing else is carried over. One
    (the default): no history is ever replayed across turns, so a team deployed with
    renamed or new tools, agents or instructions continues every existing session on its
    next message (a larger number replays the run's earlier turns on the new code, which
    fails with a nondeterminism error when the team changed)."""


@dataclass(slots=True)
class Setup:
    """One worker of this process: its runner (team, models, store) and options."""

    runner: Runner
    options: TemporalOptions


WORKERS: dict[str, Setup] = {}
"""This process's workers by task queue."""

REPLAYING = ""
"""The key of `WORKERS` a replayer's team is under (a replayed history's task queue is not
the one it ran on)."""

LIVE_TEXT: dict[str, tuple[str, list[str]]] = {}
"""The agent and text so far of the streamed model calls this process's activities run,
by workflow id: what the session's workflow shows its readers while the call runs (its `live`
query), before the call's result gives the turn its `text_delta` events."""
