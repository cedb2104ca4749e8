"""What a turn answered by a remote A2A agent costs, over loopback: a sticky `RemoteAgent`
(each turn a new task of the same context, streamed) against the a2a-sdk server of
tests/protocols/remote_billing.py in a process of its own, beside the same exchange made
with the a2a-sdk's own client (a new client per call, as a `RemoteAgent` makes).

    python bench/remote.py [--turns 100]

Prints one JSON line: mean milliseconds per turn (ours) and per exchange (the SDK alone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def ours(url: str, turns: int) -> float:
    from handoffs import Agent, RemoteAgent, Runner, Team
    from handoffs.testing import ScriptedModel, transfer

    team = Team([Agent("triage", handoffs=["billing"]), RemoteAgent("billing", url)])
    runner = Runner(team, model=ScriptedModel([transfer("billing")]))
    await runner.run("bench", "balance?")  # the transfer; then billing is sticky
    t0 = time.perf_counter()
    for _ in range(turns):
        await runner.run("bench", "balance?")
    return (time.perf_counter() - t0) / turns * 1000


async def sdk(url: str, turns: int) -> float:
    from a2a.client import ClientConfig, create_client
    from a2a.client.card_resolver import parse_agent_card
    from a2a.helpers.proto_helpers import new_text_message
    from a2a.types import Role, SendMessageRequest

    card = parse_agent_card(httpx.get(url + "/.well-known/agent-card.json").json())
    tls = httpx.create_ssl_context()
    t0 = time.perf_counter()
    for _ in range(turns):
        async with httpx.AsyncClient(verify=tls) as http:
            client = await create_client(card, ClientConfig(httpx_client=http))
            message = new_text_message("balance?", context_id="sdk", role=Role.ROLE_USER)
            async for _ in client.send_message(SendMessageRequest(message=message)):
                pass
    return (time.perf_counter() - t0) / turns * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100)
    turns = parser.parse_args().turns
    port = _port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests/protocols/remote_billing.py"),
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(url + "/.well-known/agent-card.json", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("the remote agent did not start")
            time.sleep(0.05)
        print(json.dumps({"turns": turns,
                          "remote_turn_ms": round(asyncio.run(ours(url, turns)), 2),
                          "sdk_exchange_ms": round(asyncio.run(sdk(url, turns)), 2)}))
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
