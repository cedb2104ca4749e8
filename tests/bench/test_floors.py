"""bench/floors.py times the work under two of issue 32's ratios without our code: the
right work, the same as our turns do."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from handoffs import Runner

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def floors() -> Iterator[Any]:
    """bench/floors.py, imported for the test only: it brings bench/'s own modules (one of
    them named `stores`, as the tests' package is), which leave with the test."""
    path, before = list(sys.path), set(sys.modules)
    sys.path.insert(0, str(BENCH))
    import floors

    try:
        yield floors
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - before:
            if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(BENCH)):
                del sys.modules[name]


async def test_the_stream_floor_counts_the_events_a_streamed_turn_yields(floors: Any) -> None:
    import ours

    runner = Runner(ours.chain_team(1), model=ours.ChainModel(1))
    events = [e async for e in runner.stream("s", "go")]
    assert len(events) == floors.EVENTS
    assert sum(e.type == "text_delta" for e in events) == 1  # the model's stream was read


async def test_the_stream_floor_prints_each_piece_beside_our_turns(
        floors: Any, capsys: pytest.CaptureFixture[str]) -> None:
    found = await floors.stream_floor(reps=20, rounds=1)
    floors.print_stream(found)
    out = capsys.readouterr().out
    for line in ("runner.run turn (ours)", "model calls through stream", "9 Event objects",
                 "9 events through an async iterator", "a task of the turn's own",
                 "the floor of a streamed turn", "runner.stream turn (ours)"):
        assert line in out


async def test_the_replay_makes_the_spans_and_records_of_a_traced_turn(floors: Any) -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    captured, records = await floors.capture()
    shape = floors.shape_of(captured)
    names = [name for name, _, _, _ in shape]
    assert names[0] == "invoke_workflow" and len(names) == 6
    assert "execute_tool transfer_to_agent_1" in names
    assert sorted(n for n in names if n.startswith("invoke_agent")) == [
        "invoke_agent agent_0", "invoke_agent agent_1"]
    assert sum(count for _, _, count in records) == 6

    exporter = InMemorySpanExporter()
    tracers = TracerProvider()
    tracers.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    replay = floors.replayer(shape, records, tracers.get_tracer("t"), meters.get_meter("m"))
    await replay()

    again = floors.shape_of(sorted(exporter.get_finished_spans(), key=lambda s: s.start_time))
    assert again == shape  # the same names, kinds, parents and attributes
    data = reader.get_metrics_data()
    assert data is not None
    replayed = sorted((m.name, p.count) for rm in data.resource_metrics
                      for sm in rm.scope_metrics for m in sm.metrics
                      for p in m.data.data_points if isinstance(p, HistogramDataPoint))
    assert replayed == sorted((name, count) for name, _, count in records)


def test_each_piece_counted_under_valgrind_runs(floors: Any) -> None:
    import subprocess

    src = str(Path(__file__).resolve().parents[2] / "src")
    for piece in floors.floor_pieces.PIECES:
        done = subprocess.run([sys.executable, str(BENCH / "floor_pieces.py"), piece, "3"],
                              capture_output=True, text=True, timeout=60,
                              env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, (piece, done.stderr)


def test_the_instruction_floor_adds_the_pieces_to_our_run_turn(
        floors: Any, capsys: pytest.CaptureFixture[str]) -> None:
    found = {"run": 400e3, "stream": 500e3, "model calls through stream": 20e3,
             "9 Event objects": 20e3, "9 events through an async iterator": 20e3,
             "a task of the turn's own": 20e3}
    floors.print_instruction_floor(found, "python3")
    out = capsys.readouterr().out
    assert "= the floor of a streamed turn              480.0 k   floor / run ×1.200" in out
    assert "runner.stream turn (ours)                   500.0 k   stream / run ×1.250" in out
