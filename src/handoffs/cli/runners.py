"""The runner a command uses: the loaded team, a model chosen in a stated order, a store.

Model, in order: `--offline` (the offline model for every agent), `--model`, the loaded
`Runner`'s own model, `HANDOFFS_MODEL`, `OPENAI_API_KEY` (openai:gpt-4.1-mini),
`ANTHROPIC_API_KEY` (anthropic:claude-sonnet-4-6), and otherwise the offline model for
agents that have no model of their own. Store: `--store`, the loaded `Runner`'s store,
`HANDOFFS_STORE`, `sqlite:///handoffs.db` in the working directory.

A loaded `Runner` is used as it was built, never rebuilt: its telemetry, `max_steps`,
limits, history, hooks and store stay. A flag given explicitly replaces that one setting
of it (`--store` its store, `--model` its default model, `--offline` every agent's model)
and nothing else.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.team import Team
from .offline import offline_model

if TYPE_CHECKING:
    from ..runtime.runner import Runner

DEFAULT_STORE = "sqlite:///handoffs.db"
"""Where sessions are kept when neither `--store` nor `HANDOFFS_STORE` says."""


@dataclass(slots=True)
class Setup:
    """A ready runner and what a person should be told about it."""

    runner: Runner
    model: str
    """Which model answers, and why ("offline model (no model or API key is set)")."""
    offline: bool
    store: str
    """The store, as a person may be shown it: its URL with any password masked."""


def store_url(given: str | None, env: Mapping[str, str] | None = None) -> str:
    """The store URL a command uses: `--store`, else HANDOFFS_STORE, else the default."""
    env = os.environ if env is None else env
    return given or env.get("HANDOFFS_STORE") or DEFAULT_STORE


def existing_store(url: str) -> str:
    """`url`, refused when it names a SQLite file that does not exist: a command that only
    reads (`sessions list`, `stats`, ...) must not create an empty database and report
    "no sessions" for a mistyped path."""
    if url.startswith("sqlite:"):
        from ..errors import HandoffsError
        from ..stores.opening import sqlite_path

        path = sqlite_path(url)
        if path != ":memory:" and not path.startswith("file:") and not os.path.exists(path):
            raise HandoffsError(
                f"There is no SQLite database {path!r} (looked at {os.path.abspath(path)}). "
                "Sessions are where `handoffs chat`, `run` or `serve` kept them "
                f"({DEFAULT_STORE} in the directory they ran in, unless --store or "
                "HANDOFFS_STORE said otherwise): check the path.", code="store_unavailable")
    return url


def make_runner(target: Team | Runner, model: str | None = None, store: str | None = None,
                offline: bool = False, env: Mapping[str, str] | None = None) -> Setup:
    """A `Runner` for `target` with the model and store chosen as the module says: a
    loaded `Runner` itself (see `adopt`), or a new one for a `Team`."""
    from ..demo import demo_model
    from ..runtime.runner import Runner

    env = os.environ if env is None else env
    if isinstance(target, Runner):
        return adopt(target, model, store, offline, env)
    team = target
    url = store_url(store, env)
    shown = describe_store(url)
    if offline:
        team = _without_models(team)
        return Setup(Runner(team, model=offline_model(team), store=url),
                     "the offline model (--offline)", True, shown)
    spec, why = demo_model(model, env)
    if spec is not None:
        return Setup(Runner(team, model=spec, store=url), f"{spec} ({why})", False, shown)
    needy = _needy(team)
    if not needy:
        return Setup(Runner(team, store=url), "each agent's own model", False, shown)
    return Setup(Runner(team, model=offline_model(team), store=url), _offline_note(team),
                 True, shown)


def adopt(runner: Runner, model: str | None = None, store: str | None = None,
          offline: bool = False, env: Mapping[str, str] | None = None) -> Setup:
    """The loaded `runner` itself, with only what the command line says explicitly put
    in: `store` replaces its store, `model` its default model (agents with a model of
    their own keep it), `offline` the model of every agent. A runner with no default
    model gets the one `HANDOFFS_MODEL` or an API key names, else the offline model for
    the agents that need one, as a team would. Everything else stays as built."""
    from ..demo import demo_model
    from ..stores import open_store

    env = os.environ if env is None else env
    if store is not None:
        runner.store = open_store(store)
    shown = describe_store(runner.store)
    team = runner.team
    if offline:
        _use_model(runner, offline_model(team), every_agent=True)
        return Setup(runner, "the offline model (--offline)", True, shown)
    if model is None and runner.model is not None:
        name = runner.model if isinstance(runner.model, str) else type(runner.model).__name__
        return Setup(runner, f"{name} (the runner's own model)", False, shown)
    spec, why = demo_model(model, env)
    if spec is not None:
        _use_model(runner, spec)
        return Setup(runner, f"{spec} ({why})", False, shown)
    if not _needy(team):
        return Setup(runner, "each agent's own model", False, shown)
    _use_model(runner, offline_model(team))
    return Setup(runner, _offline_note(team), True, shown)


def _use_model(runner: Runner, spec: Any, every_agent: bool = False) -> None:
    """Make `spec` the runner's default model (and, with `every_agent`, the model of
    every agent, their own included), as if the runner had been built with it."""
    runner.model = spec
    models = runner.agent_models  # the runner's resolved models, by agent name
    for agent in runner.team.agents:
        if agent.is_human:
            continue
        if every_agent:
            models[agent.name] = spec
        elif agent.model is None:
            models[agent.name] = runner._resolve_model(agent)


def _needy(team: Team) -> list[str]:
    return [a.name for a in team.agents if a.model is None and not a.is_human]


def _offline_note(team: Team) -> str:
    needy = _needy(team)
    note = "the offline model (no --model, HANDOFFS_MODEL or API key is set)"
    if len(needy) < sum(1 for a in team.agents if not a.is_human):
        note += f" for {', '.join(needy)}; other agents use their own"
    return note


def describe_store(store: Any) -> str:
    """How to name a store (or store URL) to a person: its URL with any password masked
    (`postgresql://app:***@db/app`), `memory://` or `sqlite:///path`."""
    from ..stores.postgres_sql import redact

    if isinstance(store, str):
        return redact(store) if store.startswith(("postgres://", "postgresql://")) else store
    kind = type(store).__name__
    if kind == "PostgresStore":
        url = redact(store.dsn)
        return f"{url}{'&' if '?' in url else '?'}schema={store.schema}" if store.schema \
            else url
    if kind == "SQLiteStore":
        path = str(store.path)
        return "sqlite:///:memory:" if path.startswith("file:handoffs-") else \
            f"sqlite:///{path}"
    if kind == "MemoryStore":
        return "memory://"
    return kind


def _without_models(team: Team) -> Team:
    """The same team with every agent's own model removed, so nothing leaves the machine."""
    if all(a.model is None for a in team.agents):
        return team
    agents = [dataclasses.replace(a, model=None) for a in team.agents]
    return Team(agents, entry=team.entry, supervisor=team.supervisor, fallback=team.fallback,
                policy=team.policy, summarizer=team.summarizer,
                context_type=team.context_type, context_public=team.context_public)
