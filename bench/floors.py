"""The floors under two of issue 32's ratios: what the work itself costs, without us.

    python bench/floors.py                      # both, on this interpreter
    python bench/floors.py --figure stream      # runner.stream / runner.run
    python bench/floors.py --figure traced      # traced / untraced turn (the otel extra)

A ratio's target is only reachable when the work that its numerator must do, whoever
does it, costs less than the target allows. Each figure here times that work alone, on the
same interpreter and in the same process as our turn, and prints the ratio our turn would
have if it cost nothing beyond it:

- `stream`: a streamed H=1 turn (bench/ours.py's `fig_streamed`, the zero-latency chain
  model) does what the `runner.run` turn does, plus: the model's two calls go through its
  `stream` (an async generator: its text as a `TextDelta`, then the response) instead of
  `complete`; nine `Event` objects exist (the `runner.run` turn keeps its events as
  tuples until someone reads them); the nine reach the reader through an async iterator;
  and the turn runs in a task of its own, which goes on if the reader goes away (eager on
  CPython 3.12+; on 3.11 a task takes a pass of the event loop). Each piece is timed
  alone, as the least code that does it, and added to our measured `runner.run` turn.
- `traced`: a traced H=1 turn makes six spans and six histogram records. The spans and
  records of one of our traced turns are captured (names, kinds, parents, attributes),
  then replayed straight into the OpenTelemetry SDK, configured as bench/telemetry.py's
  `sdk` mode does (batch processor, a discarding exporter, an in-memory metric reader):
  the SDK's own cost for that telemetry, with no handoffs code at all.

Medians of `--rounds` rounds, each the median of `--reps` timed repetitions.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

import ours

from handoffs import Runner
from handoffs.core.events import Event
from handoffs.models import ModelRequest

US = 1e6
EVENTS = 9
"""Events of the streamed H=1 turn: run_started, agent_started, handoff_requested,
agent_handoff, agent_changed, agent_started, text_delta, message, run_completed."""


async def timed(step: Callable[[int], Awaitable[Any]], reps: int, rounds: int) -> float:
    """Median seconds of one `await step(i)`: the median over rounds of per-round medians."""
    medians = []
    i = 0
    for _ in range(rounds):
        samples = []
        for _ in range(reps):
            i += 1
            t0 = time.perf_counter()
            await step(i)
            samples.append(time.perf_counter() - t0)
        medians.append(statistics.median(samples))
    return statistics.median(medians)


# -- stream ---------------------------------------------------------------------------


async def stream_floor(reps: int, rounds: int) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    runner = Runner(ours.chain_team(1), model=ours.ChainModel(1))
    model = ours.ChainModel(1)
    requests = [ModelRequest(agent=f"agent_{i}", system="", messages=[], tools=[])
                for i in (0, 1)]
    data: dict[str, Any] = {"agent": "agent_1"}
    ready = [object()] * EVENTS

    async def run(i: int) -> None:
        await runner.run(f"r{i}", "go")

    async def stream(i: int) -> None:
        [e async for e in runner.stream(f"s{i}", "go")]

    async def complete(i: int) -> None:  # the run turn's two model calls
        for r in requests:
            await model.complete(r)

    async def streamed(i: int) -> None:  # the same two calls through the model's stream
        for r in requests:
            async for _ in model.stream(r):
                pass

    async def events(i: int) -> None:
        for k in range(EVENTS):
            Event("message", "s", 1, 0.0, data, None, k)

    async def pieces() -> Any:
        for e in ready:
            yield e

    async def read(i: int) -> None:
        [e async for e in pieces()]

    async def answer() -> int:
        return 1

    async def task(i: int) -> None:
        if sys.version_info >= (3, 12):
            await asyncio.Task(answer(), loop=loop, eager_start=True)
        else:  # the task's step and the reader's wake-up share one pass of the loop
            t = loop.create_task(answer())
            await asyncio.sleep(0)
            await t

    async def nothing(i: int) -> None:
        pass

    for step in (run, stream):  # warm up (3.11 specializes after a few calls)
        for k in range(50):
            await step(-k - 1)
    out = {name: await timed(step, reps, rounds) for name, step in (
        ("run", run), ("stream", stream), ("complete", complete), ("streamed", streamed),
        ("events", events), ("read", read), ("task", task), ("nothing", nothing))}
    empty = out.pop("nothing")  # the timing loop's own cost, once per piece
    extra = {"model calls through stream": out["streamed"] - out["complete"],
             f"{EVENTS} Event objects": out["events"] - empty,
             f"{EVENTS} events through an async iterator": out["read"] - empty,
             "a task of the turn's own": out["task"] - empty}
    return {"run": out["run"], "stream": out["stream"], **extra}


def print_floor(found: dict[str, float], title: str, unit: str, scale: float) -> None:
    """Our two turns and the floor's pieces, `found` in seconds or instructions (`scale`
    turns them into `unit`)."""
    run, stream = found.pop("run"), found.pop("stream")
    floor = run + sum(found.values())
    print(f"runner.stream / runner.run, H=1, {title}")
    print(f"  runner.run turn (ours)                   {run * scale:8.1f} {unit}")
    for name, n in found.items():
        print(f"  + {name:<38} {n * scale:8.1f} {unit}")
    print(f"  = the floor of a streamed turn           {floor * scale:8.1f} {unit}"
          f"   floor / run ×{floor / run:.3f}")
    print(f"  runner.stream turn (ours)                {stream * scale:8.1f} {unit}"
          f"   stream / run ×{stream / run:.3f}")


def print_stream(found: dict[str, float]) -> None:
    print_floor(found, f"CPython {sys.version.split()[0]}", "µs", US)


# -- traced ---------------------------------------------------------------------------


async def capture() -> tuple[list[Any], list[tuple[str, dict[str, Any], int]]]:
    """One traced H=1 turn's spans (in start order) and histogram records."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from handoffs.telemetry import Telemetry

    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    telemetry = Telemetry(tracer_provider=tracer_provider,
                          meter_provider=MeterProvider(metric_readers=[reader]))
    runner = Runner(ours.chain_team(1), model=ours.ChainModel(1), telemetry=telemetry)
    await runner.run("capture", "go")
    records = []
    data = reader.get_metrics_data()
    assert data is not None
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for point in metric.data.data_points:
                    if isinstance(point, HistogramDataPoint):
                        records.append((metric.name, dict(point.attributes or {}),
                                        point.count))
    return sorted(spans.get_finished_spans(), key=lambda s: s.start_time), records


def shape_of(spans: list[Any]) -> list[tuple[str, Any, int | None, dict[str, Any]]]:
    """Each span (in start order) as (name, kind, index of its parent or None, attributes)."""
    index = {s.context.span_id: i for i, s in enumerate(spans)}
    return [(s.name, s.kind, index.get(s.parent.span_id) if s.parent is not None else None,
             dict(s.attributes or {})) for s in spans]


def replayer(shape: list[tuple[str, Any, int | None, dict[str, Any]]],
             records: list[tuple[str, dict[str, Any], int]], tracer: Any,
             meter: Any) -> Callable[[int], Awaitable[None]]:
    """A step that makes those spans and histogram records through `tracer` and `meter`."""
    from opentelemetry import trace
    from opentelemetry.context import attach, detach

    histograms = {name: meter.create_histogram(name) for name, _, _ in records}
    in_context = trace.set_span_in_context

    async def replay(i: int) -> None:
        made: list[Any] = []
        for name, kind, parent, attributes in shape:
            context = None if parent is None else in_context(made[parent])
            made.append(tracer.start_span(name, context, kind, attributes))
        # Recorded while the turn's span is current, as a traced turn records them: the
        # SDK then keeps an exemplar (the span's ids) with each measurement.
        token = attach(in_context(made[0]))
        try:
            for name, attributes, count in records:
                for _ in range(count):
                    histograms[name].record(0.001, attributes)
        finally:
            detach(token)
        for span in reversed(made):
            span.end()
    return replay


async def traced_floor(reps: int, rounds: int) -> dict[str, float]:
    captured, records = await capture()
    import telemetry as bench_telemetry

    bench_telemetry.configure("sdk")  # the global providers, as the `sdk` mode has them
    from opentelemetry import metrics, trace

    shape = shape_of(captured)
    replay = replayer(shape, records, trace.get_tracer("replay"), metrics.get_meter("replay"))
    untraced = Runner(ours.chain_team(1), model=ours.ChainModel(1), telemetry=False)
    traced = Runner(ours.chain_team(1), model=ours.ChainModel(1))

    async def run_untraced(i: int) -> None:
        await untraced.run(f"u{i}", "go")

    async def run_traced(i: int) -> None:
        await traced.run(f"t{i}", "go")

    for step in (run_untraced, run_traced, replay):
        for k in range(50):
            await step(-k - 1)
    return {"untraced": await timed(run_untraced, reps, rounds),
            "traced": await timed(run_traced, reps, rounds),
            "sdk": await timed(replay, reps, rounds),
            "spans": float(len(shape)),
            "records": float(sum(count for _, _, count in records))}


def print_traced(found: dict[str, float]) -> None:
    untraced, sdk = found["untraced"], found["sdk"]
    floor = untraced + sdk
    print(f"traced / untraced turn, H=1, CPython {sys.version.split()[0]}")
    print(f"  untraced turn (ours, telemetry=False)    {untraced * US:8.1f} µs")
    what = f"the SDK alone: {found['spans']:.0f} spans, {found['records']:.0f} records"
    print(f"  + {what:<38} {sdk * US:8.1f} µs")
    print(f"  = the floor of a traced turn             {floor * US:8.1f} µs"
          f"   floor / untraced ×{floor / untraced:.2f}")
    print(f"  traced turn (ours)                       {found['traced'] * US:8.1f} µs"
          f"   traced / untraced ×{found['traced'] / untraced:.2f}")


# -- the stream's floor in CPU instructions ---------------------------------------------

PIECES_CHILD = """
import asyncio, gc, sys
from handoffs.core.events import Event
from handoffs.core.messages import ToolCall
from handoffs.models import ModelRequest, ModelResponse, TextDelta

class ChainModel:  # bench/ours.py's model, as bench/instructions.py's child has it
    def __init__(self):
        self.calls = 0
    async def complete(self, request):
        self.calls += 1
        if request.agent == "agent_0":
            return ModelResponse("", (ToolCall(f"call_{self.calls}", "transfer_to_agent_1",
                                               '{"reason": "next"}'),))
        return ModelResponse("done")
    async def stream(self, request):
        response = await self.complete(request)
        if response.text:
            yield TextDelta(response.text)
        yield response

piece, n, events = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model = ChainModel()
requests = [ModelRequest(agent=f"agent_{i}", system="", messages=[], tools=[]) for i in (0, 1)]
data = {"agent": "agent_1"}
ready = [object()] * events

async def pieces():
    for e in ready:
        yield e

async def answer():
    return 1

async def main():
    loop = asyncio.get_running_loop()
    gc.disable()
    for _ in range(n):
        if piece == "complete":
            for r in requests:
                await model.complete(r)
        elif piece == "stream":
            for r in requests:
                async for _ in model.stream(r):
                    pass
        elif piece == "events":
            for k in range(events):
                Event("message", "s", 1, 0.0, data, None, k)
        elif piece == "loop":  # the events piece's loop, without the events
            for k in range(events):
                pass
        elif piece == "read":
            [e async for e in pieces()]
        elif piece == "task":
            if sys.version_info >= (3, 12):
                await asyncio.Task(answer(), loop=loop, eager_start=True)
            else:
                t = loop.create_task(answer())
                await asyncio.sleep(0)
                await t
        else:  # "nothing": the loop's own cost
            await answer()

asyncio.run(main())
"""
"""Each piece of `stream_floor`, `n` times, for callgrind (bench/instructions.py)."""


def instruction_floor(python: str, reps: tuple[int, int] = (200, 1200)) -> dict[str, float]:
    """The stream's floor in CPU instructions (valgrind): our two turns per turn
    (bench/instructions.py) and each piece per repetition, the empty loop's cost taken
    off. Machine noise cannot move these."""
    import instructions as count

    src = Path(__file__).resolve().parents[1] / "src"
    count.warm(python, src)

    def per(piece: str) -> float:
        n1, n2 = reps
        found = [count.instructions(python, src, ["-c", PIECES_CHILD, piece, str(n),
                                                  str(EVENTS)]) for n in (n1, n2)]
        return (found[1] - found[0]) / (n2 - n1)

    empty = per("nothing")
    return {"run": count.per_turn(python, src, 1, "run", (30, 90)),
            "stream": count.per_turn(python, src, 1, "stream", (30, 90)),
            "model calls through stream": per("stream") - per("complete"),
            f"{EVENTS} Event objects": per("events") - per("loop"),
            f"{EVENTS} events through an async iterator": per("read") - empty,
            "a task of the turn's own": per("task") - empty}


def print_instruction_floor(found: dict[str, float], python: str) -> None:
    print_floor(found, f"CPU instructions (valgrind), {python}", "k", 1e-3)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--figure", choices=("stream", "traced", "instructions", "all"),
                   default="all", help="instructions: the stream's floor under valgrind")
    p.add_argument("--python", default=sys.executable,
                   help="the interpreter whose instructions are counted")
    p.add_argument("--reps", type=int, default=300)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    if a.figure in ("stream", "all"):
        print_stream(asyncio.run(stream_floor(a.reps, a.rounds)))
    if a.figure in ("traced", "all"):
        print_traced(asyncio.run(traced_floor(a.reps, a.rounds)))
    if a.figure == "instructions":
        print_instruction_floor(instruction_floor(a.python), a.python)


if __name__ == "__main__":
    main()
