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

import floor_pieces
import ours

from handoffs import Runner

US = 1e6
EVENTS = floor_pieces.EVENTS


async def timed(step: Callable[[], Awaitable[Any]], reps: int, rounds: int) -> float:
    """Median seconds of one `await step()`: the median over rounds of per-round medians."""
    medians = []
    for _ in range(rounds):
        samples = []
        for _ in range(reps):
            t0 = time.perf_counter()
            await step()
            samples.append(time.perf_counter() - t0)
        medians.append(statistics.median(samples))
    return statistics.median(medians)


def extra_of(cost: Callable[[str], float]) -> dict[str, float]:
    """What a streamed turn adds to a run turn, from each piece's `cost`
    (bench/floor_pieces.py), the cost of calling a piece taken off."""
    empty = cost("nothing")
    return {"model calls through stream": cost("stream") - cost("complete"),
            f"{EVENTS} Event objects": cost("events") - cost("count"),
            f"{EVENTS} events through an async iterator": cost("read") - empty,
            "a task of the turn's own": cost("task") - empty}


def sessions(runner: Runner, prefix: str) -> Callable[[], Awaitable[Any]]:
    """A step that runs (or streams, every event read) a turn on a new session each time."""
    n = iter(range(10**9))
    if prefix == "s":
        async def streamed() -> None:
            [e async for e in runner.stream(f"s{next(n)}", "go")]
        return streamed

    async def run() -> None:
        await runner.run(f"{prefix}{next(n)}", "go")
    return run


# -- stream ---------------------------------------------------------------------------


async def stream_floor(reps: int, rounds: int) -> dict[str, float]:
    runner = Runner(ours.chain_team(1), model=ours.ChainModel(1))
    run, stream = sessions(runner, "r"), sessions(runner, "s")
    for step in (run, stream):  # warm up (3.11 specializes after a few calls)
        for _ in range(50):
            await step()
    found = {"run": await timed(run, reps, rounds), "stream": await timed(stream, reps, rounds)}
    pieces = {name: await timed(piece, reps, rounds)
              for name, piece in floor_pieces.PIECES.items()}
    return {**found, **extra_of(pieces.__getitem__)}


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
             meter: Any) -> Callable[[], Awaitable[None]]:
    """A step that makes those spans and histogram records through `tracer` and `meter`."""
    from opentelemetry import trace
    from opentelemetry.context import attach, detach

    histograms = {name: meter.create_histogram(name) for name, _, _ in records}
    in_context = trace.set_span_in_context

    async def replay() -> None:
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

    run_untraced, run_traced = sessions(untraced, "u"), sessions(traced, "t")
    for step in (run_untraced, run_traced, replay):
        for _ in range(50):
            await step()
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

def instruction_floor(python: str, reps: tuple[int, int] = (200, 1200)) -> dict[str, float]:
    """The stream's floor in CPU instructions (valgrind): our two turns per turn
    (bench/instructions.py) and each piece per repetition. Machine noise cannot move
    these."""
    import instructions as count

    src = Path(__file__).resolve().parents[1] / "src"
    script = str(Path(floor_pieces.__file__).resolve())
    count.warm(python, src)

    def per(piece: str) -> float:
        n1, n2 = reps
        found = [count.instructions(python, src, [script, piece, str(n)]) for n in (n1, n2)]
        return (found[1] - found[0]) / (n2 - n1)

    return {"run": count.per_turn(python, src, 1, "run", (30, 90)),
            "stream": count.per_turn(python, src, 1, "stream", (30, 90)), **extra_of(per)}


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
