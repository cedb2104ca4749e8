"""`handoffs worker TEAM --temporal HOST:PORT --task-queue Q`: a Temporal worker that runs
the team's sessions (`handoffs.temporal`): their workflows, and the model, tool and store
activities, with the team's models and the store (`--store`, as `handoffs serve`).

Start as many as you like, on one machine or several, on the same task queue and store:
a turn whose worker dies goes on on another. Stops on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any


def worker(team: str | None, address: str, task_queue: str, store: str | None,
           model: str | None, offline: bool, namespace: str = "default",
           tool_timeout: float | None = None, heartbeat: float | None = None) -> int:
    """Run a worker until it is stopped; 0 when it stopped cleanly, 2 without the extra."""
    try:
        import temporalio  # noqa: F401
    except ImportError:
        from ..errors import install_hint

        print(f"handoffs worker needs temporalio; install {install_hint('temporal')}",
              file=sys.stderr)
        return 2
    from .loading import load_target
    from .runners import make_runner

    setup = make_runner(load_target(team), model, store, offline)
    options: dict[str, Any] = {}
    if tool_timeout is not None:
        options["tool_timeout"] = tool_timeout
    if heartbeat is not None:
        options["heartbeat_timeout"] = heartbeat
    print(f"handoffs: worker for {team or 'the built-in support team'} on {address}, "
          f"task queue {task_queue!r}", flush=True)
    print(f"handoffs: store {setup.store}; model: {setup.model}", flush=True)
    return asyncio.run(_serve(setup.runner, address, namespace, task_queue, options))


async def _serve(runner: Any, address: str, namespace: str, task_queue: str,
                 options: dict[str, Any]) -> int:
    from temporalio.client import Client

    from ..temporal import TemporalOptions, make_worker

    client = await Client.connect(address, namespace=namespace)
    w = make_worker(client, runner, task_queue, TemporalOptions(**options))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with w:
        print("handoffs: worker ready", flush=True)
        await stop.wait()
    await runner.store.close()
    return 0
