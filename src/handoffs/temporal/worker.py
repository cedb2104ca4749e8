"""A Temporal worker for a team: it runs the sessions' workflows and their activities
(`handoffs worker TEAM --temporal HOST:PORT --task-queue Q` runs one).

The workflows run without Temporal's sandbox (`UnsandboxedWorkflowRunner`): the
workflow's code is handoffs' own driver, which reads the clock and makes ids only
through its executor (here the workflow's), and the team's functions the in-process
runtime calls too. The sandbox would re-import the library and the team for every
workflow run and guard nothing the executor seam does not already route through the
workflow; determinism is checked by replaying recorded histories (`Replayer`).
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ..runtime.runner import Runner
from .activities import Activities
from .options import REPLAYING, WORKERS, Setup, TemporalOptions
from .workflow import SessionWorkflow


def make_worker(client: Client, runner: Runner, task_queue: str,
                options: TemporalOptions | None = None, **worker_args: Any) -> Worker:
    """A worker that runs the team of `runner` on `task_queue`: the sessions' workflows
    and the model, tool and store activities (with the runner's models and store).
    `await worker.run()` (or `async with worker:`) serves until cancelled.
    `worker_args` go to `temporalio.worker.Worker` (e.g. `max_concurrent_activities`)."""
    options = options or TemporalOptions()
    WORKERS[task_queue] = Setup(runner, options)
    acts = Activities(runner, heartbeat=max(options.heartbeat_timeout / 3, 0.05))
    return Worker(client, task_queue=task_queue, workflows=[SessionWorkflow],
                  activities=acts.all(), workflow_runner=UnsandboxedWorkflowRunner(),
                  **worker_args)


def replayer(runner: Runner, options: TemporalOptions | None = None) -> Any:
    """A `temporalio.worker.Replayer` for the session workflow with this team (to check
    that recorded histories replay: `await replayer(runner).replay_workflow(history)`).
    Replaying schedules no activity: the history holds their results."""
    from temporalio.worker import Replayer

    WORKERS[REPLAYING] = Setup(runner, options or TemporalOptions())
    return Replayer(workflows=[SessionWorkflow], workflow_runner=UnsandboxedWorkflowRunner())
