"""docs/img/trace_phoenix.png: one traced turn, as Arize Phoenix shows it (`make
trace-screenshot`).

Everything runs here, offline: Phoenix (from PyPI, in its own venv: `make trace-screenshot`
installs it in .test-venvs/phoenix) receives OTLP/HTTP on a free port; the support-like
team runs on the OpenAI adapter (the official SDK) against the tests' local
OpenAI-compatible server (tests/wire), with OpenTelemetry's httpx2 instrumentation on, so
each model call's HTTP POST is a real span under its `chat`; then Playwright drives
Debian's Chromium to the trace and takes the picture.

    .venv/bin/python docs/_tools/trace_screenshot.py [--out PATH] [--phoenix BIN]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # the local OpenAI-compatible server
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_phoenix(binary: str, port: int, workdir: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PHOENIX_WORKING_DIR": workdir, "PHOENIX_PORT": str(port),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_GRPC_PORT": str(free_port()),
           "PHOENIX_TELEMETRY_ENABLED": "false"}
    proc = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180  # its first start migrates a new database
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/projects", timeout=2).is_success:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"Phoenix did not start on port {port}")
        time.sleep(0.5)


def traced_turn(port: int) -> str:
    """One turn of a two-agent team on the OpenAI SDK, traced to Phoenix; its trace id."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from handoffs import Agent, Runner, Team, tool
    from handoffs.telemetry import Telemetry
    from wire.clients import openai_model
    from wire.openai_api import OpenAIWire, completion, tool_call
    from wire.server import FakeServer

    provider = TracerProvider(resource=Resource.create({
        "service.name": "support", "openinference.project.name": "handoffs"}))
    provider.add_span_processor(SimpleSpanProcessor(
        OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces")))
    HTTPX2ClientInstrumentor().instrument(tracer_provider=provider)

    @tool
    def lookup_order(order_id: str) -> str:
        """Look an order up: what was bought, and what was charged."""
        return f"{order_id}: noise-cancelling headphones, charged 129.00 twice on May 1"

    server = FakeServer(OpenAIWire()).start()
    server.add(
        completion(calls=[tool_call("call_1", "transfer_to_billing",
                                    {"reason": "duplicate charge on A-1001"})],
                   usage=(312, 24)),
        completion(calls=[tool_call("call_2", "lookup_order", {"order_id": "A-1001"})],
                   usage=(405, 19)),
        completion("A-1001 was charged twice on May 1; I have refunded the second charge "
                   "of 129.00.", usage=(471, 28)))
    team = Team([
        Agent("triage", description="Routes customers.",
              instructions="Route the customer to the right agent.", handoffs=["billing"]),
        Agent("billing", description="Charges, invoices, refunds.",
              instructions="Sort out charges and refunds.", tools=[lookup_order]),
    ])
    runner = Runner(team, model=openai_model(server), store="memory://", telemetry=Telemetry(
        tracer_provider=provider, capture_content=True, workflow_name="support"))
    try:
        result = asyncio.run(runner.run("session-42", "I was charged twice for order A-1001"))
    finally:
        server.stop()
    provider.force_flush()
    trace_id = result.events[0].data["trace_id"]
    assert isinstance(trace_id, str)
    return trace_id


async def screenshot(url: str, out: Path) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium",
                                          args=CHROMIUM_ARGS)
        page = await browser.new_page(viewport={"width": 1440, "height": 900},
                                      device_scale_factor=1)
        await page.goto(url)
        await page.get_by_text("POST").first.wait_for(timeout=60_000)
        await page.get_by_text("chat gpt-test").first.click()
        await page.wait_for_timeout(3000)  # the span's details render
        await page.screenshot(path=str(out))
        await browser.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "trace_phoenix.png")
    p.add_argument("--phoenix", default=str(ROOT / ".test-venvs" / "phoenix" / "bin" /
                                            "phoenix"))
    args = p.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as workdir:
        phoenix = start_phoenix(args.phoenix, port, workdir)
        try:
            trace_id = traced_turn(port)
            projects = httpx.get(f"http://127.0.0.1:{port}/v1/projects").json()["data"]
            project = next(x["id"] for x in projects if x["name"] == "handoffs")
            time.sleep(1)  # Phoenix writes spans in batches
            asyncio.run(screenshot(
                f"http://127.0.0.1:{port}/projects/{project}/traces/{trace_id}", args.out))
        finally:
            phoenix.terminate()
            phoenix.wait(30)
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
