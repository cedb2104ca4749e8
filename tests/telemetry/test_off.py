"""With OpenTelemetry absent or unconfigured, telemetry does nothing at all; the
application's global providers turn it on; `telemetry=False` keeps it off."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from handoffs import Agent, HandoffsError, Runner, Team
from handoffs.testing import ScriptedModel, reply, transfer


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


TURN = """
    import asyncio, sys
    from handoffs import Agent, Runner, Team
    from handoffs.testing import ScriptedModel, reply, transfer
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    def turn(**options):
        model = ScriptedModel([transfer("billing"), reply("Done.")])
        return asyncio.run(Runner(team, model=model, **options).run("s", "hi"))
"""


def test_a_turn_never_imports_opentelemetry_unless_the_application_did() -> None:
    out = run(TURN + """
    res = turn()
    print(res.output, sorted(m for m in sys.modules if m.startswith("opentelemetry")))
    """)
    assert out == "Done. []"


async def test_an_unconfigured_api_leaves_turns_untraced() -> None:
    import opentelemetry.trace  # imported, with its default no-op provider

    assert type(opentelemetry.trace.get_tracer_provider()).__name__ == "ProxyTracerProvider"
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    runner = Runner(team, model=ScriptedModel([transfer("billing"), reply("Done.")]))
    result = await runner.run("s", "hi")

    assert result.output == "Done."
    assert all("trace_id" not in e.data for e in result.events)


def test_the_applications_global_providers_turn_it_on() -> None:
    out = run(TURN + """
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    res = turn()
    print(sorted(s.name for s in exporter.get_finished_spans()))
    turn(telemetry=False)
    print(len(exporter.get_finished_spans()))
    """)
    names, count = out.splitlines()
    assert names == str(sorted(["invoke_workflow", "invoke_agent triage", "chat",
                                "execute_tool transfer_to_billing", "invoke_agent billing",
                                "chat"]))
    assert count == "6"  # the second runner, telemetry=False, added none


def test_runner_refuses_a_telemetry_option_it_does_not_know() -> None:
    with pytest.raises(HandoffsError) as raised:
        Runner(Team([Agent("a")]), telemetry="yes")  # type: ignore[arg-type]
    assert raised.value.code == "invalid_argument"


def test_the_per_turn_check_reads_the_apis_globals_without_a_call() -> None:
    """`global_*_provider` skip OpenTelemetry's getters (and `os.environ`, a microsecond
    each) through the API's own globals; were they renamed, turns would still be traced,
    only a little slower: this says so before a benchmark has to."""
    import opentelemetry.metrics._internal as metrics_internal
    import opentelemetry.trace as trace

    assert hasattr(trace, "_TRACER_PROVIDER")
    assert hasattr(metrics_internal, "_METER_PROVIDER")
