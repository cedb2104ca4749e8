"""What a `Runner` checks when it is built, and how it finds each agent's model."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.agent import Agent
from ..core.handoff import HISTORY_MODES
from ..core.team import Team
from ..errors import HandoffsError
from ..models.base import Model

if TYPE_CHECKING:
    from .config import RunnerConfig


def check_timeout(value: float | None, name: str) -> None:
    """A time limit must be a positive number of seconds (or None: no limit)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                              or not value > 0):
        raise HandoffsError(f"{name} must be a positive number of seconds or None, not "
                            f"{value!r}.", code="invalid_argument")


def check_runner(team: Team, config: RunnerConfig) -> None:
    """`Runner(...)`'s arguments, refused with `invalid_team` / `invalid_argument`."""
    if not isinstance(team, Team):
        raise HandoffsError("Runner needs a Team; wrap your agents: Team([...]).",
                            code="invalid_team")
    if config.max_steps < 1:
        raise HandoffsError("max_steps must be at least 1.", code="invalid_argument")
    if config.max_message_chars < 1:
        raise HandoffsError("max_message_chars must be at least 1.",
                            code="invalid_argument")
    check_timeout(config.turn_timeout, "turn_timeout")
    history = config.history
    if not callable(history) and history not in HISTORY_MODES:
        raise HandoffsError(
            f"Runner history must be one of {', '.join(HISTORY_MODES)} or a callable "
            f"over the transcript, not {history!r}.", code="invalid_argument")
    if config.on_max_steps is not None and not callable(config.on_max_steps):
        raise HandoffsError("on_max_steps must be a function of the RunContext that "
                            "returns the turn's output.", code="invalid_argument")


class AgentModels(dict[str, Model | None]):
    """Each agent's model, resolved the first time the agent needs one, so a runner
    without any model still serves operators (`reply_as_human`, `select_agent`, reads)."""

    __slots__ = ("resolve",)

    def __init__(self, resolve: Callable[[str], Model | None]) -> None:
        super().__init__()
        self.resolve = resolve

    def __missing__(self, name: str) -> Model | None:
        model = self[name] = self.resolve(name)
        return model


def model_spec(agent: Agent, default: Any) -> Any:
    """What names the agent's model: its own, the runner's, else `HANDOFFS_MODEL` (None
    for a person or a remote agent, and when nothing is set)."""
    if agent.is_human or agent.is_remote:
        return None
    spec: Any = agent.model if agent.model is not None else default
    return spec if spec is not None else os.environ.get("HANDOFFS_MODEL") or None


def resolve_model(agent: Agent, default: Any) -> Model | None:
    """The agent's model (None for a person or a remote agent); `no_model` when none is
    set or what is set is not a model."""
    if agent.is_human or agent.is_remote:
        return None
    spec = model_spec(agent, default)
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


def routed(model: Model | None, agent: Agent, team: Team) -> Model | None:
    """`model`, wrapped to route by one constrained choice when the agent routes that way
    (`Agent(routing="choice")` or `"calibrated"`, or the team's `routing`) and has one-way
    routes."""
    routing = agent.routing or team.routing
    if model is None or routing == "tools":
        return model
    plan = team.plan(agent.name)
    if not any(not r.handoff.returns for r in plan.routes.values()):
        return model
    from ..models.routing import RoutingChoice

    return RoutingChoice(model, plan, calibrated=routing == "calibrated")


def in_other_thread(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the caller runs outside `loop`'s thread (or outside any loop)."""
    try:
        return asyncio.get_running_loop() is not loop
    except RuntimeError:
        return True


def no_running_loop(what: str) -> None:
    """Refuses a blocking call (`run_sync`) made inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise HandoffsError(
        f"{what}() cannot run inside a running event loop; use 'await runner.run(...)'.",
        code="invalid_argument",
    )
