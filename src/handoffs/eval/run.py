"""`run_eval`: play labelled cases against a team, each in a fresh session, and measure.

Every agent's model is wrapped in a `Recorder` (what it was sent and answered, bytes,
tokens, time); each case is played in a new session of its own, cases run concurrently
within a limit, and each user message is one turn judged against its labels and read for
symptoms (`eval.symptoms`). A configuration is a model × a history view × a player (the
team, then its single-agent baseline when asked for: `eval.baseline`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..core.handoff import HISTORY_MODES, HistoryMode
from ..core.team import Team
from ..errors import HandoffsError
from ..models.base import Model
from .baseline import BASELINES, single_agent_team
from .cases import Case, check_cases, load_cases
from .examples import ROUTING_MODES, rebuilt, split_cases, with_examples, with_routing
from .judge import TurnResult, judge, observe
from .recording import Recorder, recording
from .report import EvalReport
from .results import EvalRun
from .symptoms import speakers, symptoms_of

if TYPE_CHECKING:
    from ..core.narration import Destination
    from ..runtime.runner import Runner
    from ..stores.base import SessionStore

log = logging.getLogger("handoffs.eval")

OFFLINE = ("offline", "rules")
"""Model strings that mean the offline rule-based model the CLI uses (`handoffs chat
--offline`): the support team's own rules for the support team, else keyword routing
along the team's routes."""

Progress = Callable[[int, int], None]
"""Called after each case is played with (cases played, cases to play) over the whole
evaluation."""


async def run_eval(
    target: Team | Runner,
    cases: Sequence[Case] | str | Path,
    *,
    model: Model | str | Sequence[Model | str | None] | None = None,
    repeat: int = 1,
    history: str | Sequence[str] | None = None,
    concurrency: int = 4,
    progress: Progress | None = None,
    store: SessionStore | str | None = None,
    max_steps: int | None = None,
    baseline: str | None = None,
    routing: str | Sequence[str] | None = None,
    train: float | None = None,
) -> EvalReport:
    """Play `cases` against `target` (a `Team`, or a `Runner` whose settings are kept) and
    measure who answered each turn.

    `model`: the model every agent uses (a "provider:name" string, a `Model`, or
    `"offline"` for the offline rule-based model); None keeps each agent's own model, else
    the runner's, else HANDOFFS_MODEL. A list runs the evaluation once per model, side by
    side in one report; so does a list of `history` views (the runner's default view for
    routes that set none: `full`, `conversation`, `last_user`, `none`, `summary`).
    `repeat`: how many times each case is played, each time in a fresh session (models
    that sample differ between plays); the report adds tau-bench's pass^k per case and
    overall and accuracy's spread over plays. `baseline="single"`: each configuration is
    also played by one agent holding every tool of the team (`eval.baseline`), reported
    beside the team. `concurrency`: cases played at once (a local server that answers one request
    at a time wants 1). `store`: where the sessions go (default: a new memory store per
    evaluation). `max_steps`: the runner's bound on model calls per turn (default: the
    `Runner`'s, else 20). `routing`: how every agent routes in this run (`tools`,
    `choice`: see `Agent.routing`), or a list of modes played side by side; a mode ending
    in `+examples` (`choice+examples`) also gives each route examples taken from the
    training cases. `train`: the share of cases (0.5) that only teach (`eval.examples`:
    the routes' examples come from them), the rest being played; with `train` and no
    `routing`, the team plays as `tools+examples`. None (default): the team as it is,
    every case played.

    Raises `HandoffsError` before anything is played when the cases name agents or tools
    the team does not have, or an agent has no model.
    """
    if repeat < 1:
        raise HandoffsError("repeat must be at least 1.", code="invalid_argument")
    if concurrency < 1:
        raise HandoffsError("concurrency must be at least 1.", code="invalid_argument")
    if baseline is not None and baseline not in BASELINES:
        raise HandoffsError(f"Unknown baseline {baseline!r}; one of {', '.join(BASELINES)}.",
                            code="invalid_argument")
    team = target if isinstance(target, Team) else target.team
    case_list = load_cases(cases) if isinstance(cases, str | Path) else list(cases)
    if not case_list:
        raise HandoffsError("There are no cases to play.", code="invalid_case")
    check_cases(case_list, team)
    taught: list[Case] = []
    if train is not None:
        taught, case_list = split_cases(case_list, train)
    modes: list[str | None] = (
        [routing] if isinstance(routing, str) else list(routing) if routing is not None
        else ["tools+examples"] if train is not None else [None])
    for mode in modes:
        if mode is not None and mode not in ROUTING_MODES:
            raise HandoffsError(f"Unknown routing {mode!r}; one of "
                                f"{', '.join(ROUTING_MODES)}.", code="invalid_argument")
        if mode is not None and mode.endswith("+examples") and train is None:
            raise HandoffsError(f"Routing {mode!r} takes its examples from training cases: "
                                "give a training share too (train=0.5, --train 0.5).",
                                code="invalid_argument")
    models: list[Model | str | None] = (
        [model] if model is None or isinstance(model, str) or not isinstance(model, Sequence)
        else list(model))
    views: list[str | None] = ([history] if history is None or isinstance(history, str)
                               else list(history))
    for view in views:
        if view is not None and view not in HISTORY_MODES:
            raise HandoffsError(f"Unknown history view {view!r}; one of "
                                f"{', '.join(HISTORY_MODES)}.", code="invalid_argument")
    players: list[str | None] = [None] if baseline is None else [None, baseline]
    configs = [(m, v, r, b) for m in models for v in views
               for r, b in [(r, None) for r in modes] + [(None, b) for b in players[1:]]]
    single = single_agent_team(team) if baseline is not None else None
    names = speakers(team)  # a single agent that promises "billing" is caught too
    total = len(configs) * len(case_list) * repeat
    done = 0

    def played() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    runs = []
    for m, v, r, b in configs:
        players_team = (team if r is None else _routed(team, r, taught)) if (
            b is None or single is None) else single
        setup, label = _runner(target, players_team, m, v, store, max_steps)
        started = time.perf_counter()
        try:
            turns = await _play_all(setup.runner, case_list, repeat, concurrency, played,
                                    names, routing=b is None)
        finally:
            if store is None:
                await setup.runner.store.close()
        runs.append(EvalRun(model=label, history=setup.history_label, cases=case_list,
                            turns=turns, repeat=repeat,
                            seconds=time.perf_counter() - started, baseline=b,
                            routing=r))
    return EvalReport(runs)


def run_eval_sync(*args: Any, **kwargs: Any) -> EvalReport:
    """`run_eval` for code that is not async (a script, a plain test function). Called
    where an event loop is already running (a notebook, Playwright's sync API), it plays
    the evaluation on a loop of its own in another thread and waits for it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_eval(*args, **kwargs))
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="handoffs-eval") as pool:
        return pool.submit(asyncio.run, run_eval(*args, **kwargs)).result()


@dataclasses.dataclass(slots=True)
class _Setup:
    runner: Runner
    history_label: str


def _runner(target: Team | Runner, team: Team, model: Model | str | None,
            history: str | None, store: SessionStore | str | None,
            max_steps: int | None) -> tuple[_Setup, str]:
    from ..runtime.runner import Runner

    base = target if isinstance(target, Runner) else None
    agents, default = _recorded(team, model, base)
    runner = Runner(
        rebuilt(team, agents), model=default,
        store=store if store is not None else "memory://",
        max_steps=max_steps or (base.max_steps if base is not None else 20),
        history=cast("HistoryMode", history) if history is not None else (
            base.history if base is not None else None),
        turn_timeout=base.turn_timeout if base is not None else None,
        on_max_steps=base.on_max_steps if base is not None else None,
        max_message_chars=base.max_message_chars if base is not None else 1_000_000)
    view = runner.history
    return _Setup(runner, view if isinstance(view, str) else "custom"), _label(model, base)


def _recorded(team: Team, model: Model | str | None, base: Runner | None
              ) -> tuple[list[Any], Any]:
    """The team's agents, each with its model (`model`, else its own, else the runner's,
    else HANDOFFS_MODEL) wrapped in a `Recorder`; one model (and recorder) per spec. And
    the runner's default model, for an agent asked that is not a member (a guardrail's
    classifier, `ctx.ask`): `model`'s recorder, else the base runner's model."""
    recorders: dict[Any, Recorder] = {}
    agents = []
    for agent in team.agents:
        if agent.is_human:
            agents.append(agent)
            continue
        spec: Any = model if model is not None else agent.model
        if spec is None:
            spec = base.model if base is not None and base.model is not None else (
                os.environ.get("HANDOFFS_MODEL") or None)
        if spec is None:
            raise HandoffsError(f"Agent {agent.name!r} has no model: pass model=... "
                                "(`--model`; \"offline\" for the offline rule-based model), "
                                "set Agent(model=...) or HANDOFFS_MODEL.", code="no_model")
        key = spec if isinstance(spec, str) else id(spec)
        if key not in recorders:
            if isinstance(spec, str) and spec in OFFLINE:
                from ..cli.offline import offline_model

                spec = offline_model(team)
            recorders[key] = Recorder(_resolve(spec, agent.name))
        agents.append(dataclasses.replace(agent, model=recorders[key]))
    default: Any = base.model if base is not None else None
    if model is not None:
        default = recorders.get(model if isinstance(model, str) else id(model), default)
    return agents, default


def _resolve(spec: Any, agent: str) -> Model:
    if isinstance(spec, str):
        from ..models.registry import get_model

        return get_model(spec)
    if not hasattr(spec, "complete"):
        raise HandoffsError(f"Agent {agent!r}: {spec!r} is not a model (it has no "
                            "complete()).", code="no_model")
    model: Model = spec
    return model


def _label(model: Model | str | None, base: Runner | None) -> str:
    if isinstance(model, str):
        return model
    if model is not None:
        return type(model).__name__
    if base is not None and base.model is not None:
        return base.model if isinstance(base.model, str) else type(base.model).__name__
    return os.environ.get("HANDOFFS_MODEL") or "each agent's own model"


def _routed(team: Team, mode: str, taught: Sequence[Case]) -> Team:
    """`team` routing by `mode` (`choice+examples`: `choice`, with the routes' examples
    from the `taught` cases)."""
    base, _, examples = mode.partition("+")
    routed = with_routing(team, base)
    return with_examples(routed, taught) if examples else routed


async def _play_all(runner: Runner, cases: list[Case], repeat: int, concurrency: int,
                    played: Callable[[], None], names: Mapping[str, Destination],
                    routing: bool) -> list[TurnResult]:
    gate = asyncio.Semaphore(concurrency)
    results: dict[tuple[int, int], list[TurnResult]] = {}

    async def one(i: int, case: Case, play: int) -> None:
        async with gate:
            results[i, play] = await play_case(runner, case, play, names=names,
                                               routing=routing)
        played()

    async with asyncio.TaskGroup() as group:
        for play in range(repeat):
            for i, case in enumerate(cases):
                group.create_task(one(i, case, play))
    return [t for key in sorted(results) for t in results[key]]


async def play_case(runner: Runner, case: Case, play: int = 0, *,
                    names: Mapping[str, Destination] | None = None,
                    routing: bool = True) -> list[TurnResult]:
    """Play one case in a new session of `runner`; one judged `TurnResult` per turn.
    `names`: the agents an answer may promise a transfer to (`symptoms.speakers`; default
    the runner's team's); `routing=False` judges only the answer's labels (a player
    without routes)."""
    session = f"eval-{case.id}-{play}-{uuid.uuid4().hex[:8]}"
    names = speakers(runner.team) if names is None else names
    stuck = runner.team.policy.stuck_answer
    out: list[TurnResult] = []
    for index, expect in enumerate(case.turns):
        t = TurnResult(case=case.id, play=play, index=index, user=expect.user,
                       expected=expect.agents, agent=None, status="error")
        started = time.perf_counter()
        with recording() as calls:
            try:
                result = await runner.run(session, expect.user)
            except HandoffsError as exc:
                t.error, t.error_message = exc.code, str(exc)
                result = None
            except Exception as exc:
                log.warning("eval case %s turn %d raised", case.id, index + 1, exc_info=True,
                            extra={"session_id": session, "turn": index + 1})
                t.error, t.error_message = "exception", f"{type(exc).__name__}: {exc}"
                result = None
        t.seconds = time.perf_counter() - started
        t.calls = calls
        if result is not None:
            t.agent, t.status, t.output = result.agent, result.status.value, result.output
            refused = result.refused
            t.refused_by = None if refused is None else refused.name
            if result.error is not None:
                t.error, t.error_message = result.error.code, result.error.message
            records = {r.id: r for r in result.handoffs}
            observe(t, result.events, records)
            t.symptoms = symptoms_of(result.events, records, calls, t.path, names, stuck)
        judge(t, expect, routing)
        out.append(t)
    return out
