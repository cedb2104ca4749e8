"""Supervisor plans: steps that assign tasks to agents, run as `plan_step` delegations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import HandoffsError


@dataclass(slots=True, frozen=True)
class PlanStep:
    """One step of a plan: `agent` does `task`; or, with `parallel`, a group run at once."""

    agent: str = ""
    task: str = ""
    name: str | None = None
    """How later steps and `RunResult.steps` refer to this step; None: `step<N>`."""
    parallel: Sequence[PlanStep] = ()
    """Steps run concurrently as one step; `agent` and `task` are then unused."""

    @classmethod
    def of(cls, value: PlanStep | Mapping[str, Any] | Sequence[Any]) -> PlanStep:
        """Read a step from a `PlanStep`, a dict (`agent`, `task`, `name` or `parallel`),
        or a list (a parallel group)."""
        if isinstance(value, PlanStep):
            step = value
        elif isinstance(value, Mapping):
            parallel = tuple(cls.of(v) for v in value.get("parallel", ()))
            step = cls(value.get("agent", ""), value.get("task", ""), value.get("name"),
                       parallel)
        elif isinstance(value, Sequence) and not isinstance(value, str):
            step = cls(parallel=tuple(cls.of(v) for v in value))
        else:
            raise HandoffsError(f"Not a plan step: {value!r}. Use PlanStep(agent, task), a "
                                "dict with agent and task, or a list for a parallel group.",
                                code="invalid_plan")
        if not step.parallel and (not step.agent or not step.task):
            raise HandoffsError(f"Plan step {step!r} needs an agent and a task.",
                                code="invalid_plan")
        return step
