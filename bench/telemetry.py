"""What telemetry costs per handoff: OpenTelemetry absent, unconfigured, and configured.

    python bench/telemetry.py                      # every mode, interleaved; a table
    python bench/telemetry.py --mode sdk --reps 200  # one mode: one JSON line

Modes (each in its own process, since a process sets its global providers once):
- `off`: `Runner(telemetry=False)`: no per-turn check at all (the floor);
- `absent`: the default runner, OpenTelemetry never imported (as without `handoffs[otel]`);
- `api`: the default runner, the OpenTelemetry API imported but no provider configured;
- `sdk`: the SDK configured globally: traces (batch processor, an exporter that discards)
  and metrics (an in-memory reader): what a traced production process pays, exporter
  I/O aside;
- `metrics`: only the metrics (a meter provider, no tracer provider), as
  `handoffs serve --metrics` runs: turns measured, not traced.
Two figures, with the zero-latency chain model of bench/ours.py:
- per handoff: bench/ours.py's per_handoff, (median turn at H=20 - median at H=0) / 20,
  so per-turn costs (the workflow span) cancel out;
- the 6-span turn: the median `runner.run` turn at H=1 (one handoff: `invoke_workflow`,
  two `invoke_agent`, two `chat`, one `execute_tool transfer_to_...` when traced), and
  its ratio to the same turn untraced (`off`): what a traced turn costs in all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

MODES = ("off", "absent", "api", "sdk", "metrics")


def configure(mode: str) -> None:
    if mode == "api":
        import opentelemetry.metrics
        import opentelemetry.trace  # noqa: F401
    if mode not in ("sdk", "metrics"):
        return
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    if mode == "metrics":
        return
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    class Discard(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Discard()))
    trace.set_tracer_provider(provider)


def one(mode: str, reps: int, warmup: int, hops: int) -> dict[str, Any]:
    configure(mode)
    import common
    import ours

    from handoffs import Runner

    class Adapter(ours.HandoffsAdapter):
        async def build(self, h: int, persisted: str | None = None) -> Any:
            return Runner(ours.chain_team(h), model=ours.ChainModel(h), max_steps=h + 5,
                          telemetry=False if mode == "off" else None)

    args = argparse.Namespace(reps=reps, warmup=warmup, hops=hops)
    body = asyncio.run(common.fig_per_handoff(Adapter(), args))
    turn = asyncio.run(six_span_turn(Adapter(), reps, warmup))
    loaded = sorted({m.split(".")[1] for m in sys.modules if m.startswith("opentelemetry.")})
    if mode in ("off", "absent"):
        assert not loaded, f"{mode}: OpenTelemetry was imported: {loaded}"
    return {"mode": mode, "per_handoff_s": body["per_handoff_s"],
            "turn_h0_s": body["median_h0_s"], "turn_h1_s": turn, "otel_modules": loaded}


async def six_span_turn(adapter: Any, reps: int, warmup: int) -> float:
    """The median turn at H=1 (6 spans when traced), timed alone."""
    import common

    runner = await adapter.build(1)
    samples = []
    for rep in range(warmup + reps * 2):
        dt = await common._timed_turn(adapter, runner, 1, rep, f"turn H=1 rep {rep}")
        if rep >= warmup:
            samples.append(dt)
    return statistics.median(samples)


def table(rounds: int, reps: int, warmup: int, hops: int) -> None:
    found: dict[str, list[dict[str, Any]]] = {m: [] for m in MODES}
    for _ in range(rounds):  # interleaved, so drift of the machine hits every mode alike
        for mode in MODES:
            out = subprocess.run(
                [sys.executable, __file__, "--mode", mode, "--reps", str(reps),
                 "--warmup", str(warmup), "--hops", str(hops)],
                capture_output=True, text=True, check=True).stdout
            found[mode].append(json.loads(out))
    us = 1e6
    print(f"per handoff, H={hops} vs H=0, median of {rounds} runs x {reps} reps")
    print("  mode     per handoff   turn at H=0   turn at H=1 (6 spans)   / off")
    off = statistics.median(r["turn_h1_s"] for r in found["off"])
    for mode in MODES:
        ph = statistics.median(r["per_handoff_s"] for r in found[mode]) * us
        h0 = statistics.median(r["turn_h0_s"] for r in found[mode]) * us
        h1 = statistics.median(r["turn_h1_s"] for r in found[mode])
        print(f"  {mode:<7} {ph:9.1f} µs  {h0:9.1f} µs  {h1 * us:15.1f} µs"
              f"        ×{h1 / off:.2f}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=MODES)
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--hops", type=int, default=20)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    if a.mode is None:
        table(a.rounds, a.reps, a.warmup, a.hops)
    else:
        print(json.dumps(one(a.mode, a.reps, a.warmup, a.hops)))


if __name__ == "__main__":
    main()
