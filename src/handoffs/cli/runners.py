"""The runner a command uses: the loaded team, a model chosen in a stated order, a store.

Model, in order: `--offline` (the offline model for every agent), `--model`, the loaded
`Runner`'s own model, `HANDOFFS_MODEL`, `OPENAI_API_KEY` (openai:gpt-4.1-mini),
`ANTHROPIC_API_KEY` (anthropic:claude-sonnet-4-6), and otherwise the offline model for
agents that have no model of their own. Store: `--store`, the loaded `Runner`'s store,
`HANDOFFS_STORE`, `sqlite:///handoffs.db` in the working directory.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.team import Team
from .loading import team_of
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
    """The store's URL (for a store a loaded `Runner` brought, the URL that opens it, or
    its class name for a kind of store that has none)."""


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
        from ..stores.base import sqlite_path

        path = sqlite_path(url)
        if path != ":memory:" and not path.startswith("file:") and not os.path.exists(path):
            raise HandoffsError(
                f"There is no SQLite database {path!r} (looked at {os.path.abspath(path)}). "
                "Sessions are where `handoffs chat`, `run` or `serve` kept them "
                f"({DEFAULT_STORE} in the directory they ran in, unless --store or "
                "HANDOFFS_STORE said otherwise): check the path.", code="store_unavailable")
    return url


def store_label(store: Any) -> str:
    """The URL a person would pass to `--store` to open `store` again (a password left
    out); the class name for a store that no URL names."""
    kind = type(store).__name__
    if kind == "MemoryStore":
        return "memory://"
    if kind == "SQLiteStore":
        path = str(store.path)
        return "sqlite:///:memory:" if path.startswith("file:handoffs-") else f"sqlite:///{path}"
    if kind == "PostgresStore":
        from ..stores.postgres_sql import redact

        schema = f"?schema={store.schema}" if store.schema else ""
        return redact(store.dsn) + schema
    return kind


def make_runner(target: Team | Runner, model: str | None = None, store: str | None = None,
                offline: bool = False, env: Mapping[str, str] | None = None) -> Setup:
    """A `Runner` for `target` with the model and store chosen as the module says."""
    from ..demo import demo_model
    from ..runtime.runner import Runner

    env = os.environ if env is None else env
    team = team_of(target)
    loaded = target if isinstance(target, Runner) else None
    store_obj: Any
    if store is None and loaded is not None:
        store_obj, store_name = loaded.store, store_label(loaded.store)
    else:
        store_obj = store_name = store_url(store, env)
    max_steps = loaded.max_steps if loaded is not None else 20
    if offline:
        team = _without_models(team)
        return Setup(Runner(team, model=offline_model(team), store=store_obj,
                            max_steps=max_steps),
                     "the offline model (--offline)", True, store_name)
    spec: Any
    if model is None and loaded is not None and loaded.model is not None:
        spec, why = loaded.model, "the runner's own model"
    else:
        spec, why = demo_model(model, env)
    if spec is not None:
        name = spec if isinstance(spec, str) else type(spec).__name__
        return Setup(Runner(team, model=spec, store=store_obj, max_steps=max_steps),
                     f"{name} ({why})", False, store_name)
    needy = [a.name for a in team.agents if a.model is None and not a.is_human]
    if not needy:
        return Setup(Runner(team, store=store_obj, max_steps=max_steps),
                     "each agent's own model", False, store_name)
    note = "the offline model (no --model, HANDOFFS_MODEL or API key is set)"
    if len(needy) < sum(1 for a in team.agents if not a.is_human):
        note += f" for {', '.join(needy)}; other agents use their own"
    return Setup(Runner(team, model=offline_model(team), store=store_obj, max_steps=max_steps),
                 note, True, store_name)


def _without_models(team: Team) -> Team:
    """The same team with every agent's own model removed, so nothing leaves the machine."""
    if all(a.model is None for a in team.agents):
        return team
    agents = [dataclasses.replace(a, model=None) for a in team.agents]
    return Team(agents, entry=team.entry, supervisor=team.supervisor, fallback=team.fallback,
                policy=team.policy, summarizer=team.summarizer)
