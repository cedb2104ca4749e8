"""The support team: triage routes customers to billing, refunds or technical support.

    python examples/support.py                   # offline, scripted
    HANDOFFS_MODEL=openai:gpt-4.1-mini python examples/support.py
    handoffs chat examples/support.py:team       # talk to it yourself

The team is defined in `handoffs.examples.support` (so that `handoffs demo` ships it):
triage → billing / technical; billing → refunds (a typed payload), a delegation to the
policy desk, and back to triage; refunds has tools and returns to triage; technical
escalates to a human operator, and sends billing questions on with a next-turn transfer.
This script plays the demo's conversation (tools, delegation, return to triage,
escalation and the operator's reply), then a short one that shows the next-turn transfer.
"""

from __future__ import annotations

import asyncio

from playback import announce, play, real_model

from handoffs import Runner
from handoffs.demo import run_demo
from handoffs.examples.support import build_team
from handoffs.testing import ScriptedModel, reply, transfer

team = build_team()

NEXT_TURN = [
    "My dock is fixed, thanks. But my last invoice shows the wrong address.",
    "It says Main St; it should be Oak Ave.",
]


def next_turn_script() -> ScriptedModel:
    return ScriptedModel([
        transfer("technical", reason="The dock is a product question."),
        transfer("billing", reason="An invoice question: billing takes the next message."),
        reply("Thanks! I've corrected the invoice address to Oak Ave."),
    ])


async def main() -> int:
    model = real_model()
    code = await run_demo(model=model, scripted=model is None)
    print("\nA next-turn transfer: technical hands over, billing answers the next message.")
    announce(model)
    runner = Runner(team, model=model or next_turn_script(), store="memory://")
    result = await play(runner, "support-2", NEXT_TURN)
    return code or (0 if result.ok else 1)


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
