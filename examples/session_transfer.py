"""A conversation moves to a new session held by another agent.

First with a summary (the new session starts with a summary of the old one), then by
reference (the new session only links to the old one, and the agent reads it with the
`fetch_previous_session` tool when it needs to). Both sessions link to each other, and
the old one records the move as a `programmatic` handoff.

    python examples/session_transfer.py
"""

from __future__ import annotations

import asyncio

from playback import announce, play, real_model

from handoffs import Agent, Handoff, Runner, Summarizer, Team
from handoffs.stores import MemoryStore
from handoffs.stores.transfer import fetch_session_tool
from handoffs.testing import ScriptedModel, call, reply

store = MemoryStore()
sales = Agent("sales", description="Plans and upgrades.", icon="🛒",
              instructions="Help with plans and upgrades. Hand a customer who bought a plan "
              "to onboarding for the account set-up.",
              handoffs=[Handoff("onboarding", respond="next_turn")])
onboarding = Agent("onboarding", description="Sets up new accounts.", icon="🚀",
                   instructions="Set up the customer's account. Read the earlier "
                   "conversation with fetch_previous_session when you need details.",
                   tools=[fetch_session_tool(store)])


def build(model: object) -> Team:
    summarizer = Summarizer(model=model if isinstance(model, str) else ScriptedModel([
        reply("The customer bought the Team plan for 12 seats, billed yearly.")]))
    return Team([sales, onboarding], summarizer=summarizer)


team = build(real_model())
"""For `handoffs chat examples/session_transfer.py:team`."""

def script() -> ScriptedModel:
    return ScriptedModel([
        reply("Done: the Team plan for 12 seats, billed yearly. Onboarding takes it "
              "from here."),
        reply("Welcome! Your Team plan has 12 seats; I'll send the invitations."),
        call("fetch_previous_session"),
        reply("I read your earlier conversation: 12 seats, billed yearly. Invites sent."),
    ])


async def main() -> int:
    model = real_model() or script()
    announce(model)
    team = build(model)
    runner = Runner(team, model=model, store=store)
    await play(runner, "sale-1", ["I'd like the Team plan for 12 seats, billed yearly."])

    new = await runner.transfer_session("sale-1", "onboarding", context="summary")
    print(f"moved to session {new.id} (held by {new.active_agent}); it starts with:")
    print(f"  {new.messages[0].text}\n")
    await play(runner, new.id, ["Great, what happens now?"])

    ref = await runner.transfer_session("sale-1", "onboarding", context="reference",
                                        new_session_id="sale-1-ref")
    print(f"moved to session {ref.id} by reference; it starts with:")
    print(f"  {ref.messages[0].text}\n")
    result = await play(runner, ref.id, ["How many seats did I buy?"])

    old = await runner.get_session("sale-1")
    assert old is not None
    print(f"sale-1 links to {old.metadata['transferred_to']}; "
          f"{ref.id} links back to {ref.metadata['transferred_from']}")
    moves = [(r.reason.value, r.extra["transferred_session"]) for r in old.handoffs]
    print(f"recorded on sale-1: {moves}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
