"""Durable execution on Temporal (`pip install 'handoffs[temporal]'`).

A session is a workflow (its id is the session's id); each user turn, approval, human
reply and agent pick is an update of it, run by the runtime's own driver with its model
calls, tool calls and store writes as activities. A worker killed mid-turn loses
nothing: another worker continues the turn from the workflow's history, without calling
the model again for the steps already done.

    # a worker (or: handoffs worker app:team --temporal 127.0.0.1:7233 --task-queue q)
    worker = make_worker(client, Runner(team, model=..., store=...), "q")
    await worker.run()

    # a client (or: handoffs serve app:team --temporal 127.0.0.1:7233 --task-queue q)
    runner = Runner(team, store=..., executor=TemporalExecutor(client, task_queue="q"))
    await runner.run("session-1", "hello")

`import handoffs` never imports this package (nor `temporalio`).
"""

from .client import TemporalExecutor
from .options import TemporalOptions
from .worker import make_worker, replayer
from .workflow import SessionWorkflow

__all__ = ["SessionWorkflow", "TemporalExecutor", "TemporalOptions", "make_worker",
           "replayer"]
