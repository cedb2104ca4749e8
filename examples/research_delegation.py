"""A reference agent delegates to a research agent with a typed payload.

The document is not pasted into the request: the reference agent's tool keeps it in the
session's shared memory, and the delegation carries a typed payload (which document,
the analysis context, the expected output). The research agent's instructions read the
payload (`ctx.handoff.payload`) and the document from shared memory; its answer comes
back to the reference agent as the call's result (`returns=True`).

    python examples/research_delegation.py
"""

from __future__ import annotations

import asyncio

from playback import announce, play, real_model
from pydantic import BaseModel, Field

from handoffs import Agent, Handoff, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer

LIBRARY = {
    "q3-report": "Q3 revenue grew 12% to $4.1M. Churn fell from 3.1% to 2.4% after the "
    "onboarding redesign. Support tickets per customer rose 8%, mostly about invoices. "
    "Headcount stayed flat at 41.",
}


class ResearchTask(BaseModel):
    """What the research agent needs: a document by reference, not its text."""

    document: str = Field(description="The id of a document in shared memory, e.g. q3-report.")
    context: str = Field(description="What the analysis is for.")
    expected_output: str = Field(description="The shape of the answer, e.g. 3 bullet points.")


@tool
def open_document(ctx: RunContext, name: str) -> str:
    """Load a document from the library into shared memory; returns its id.

    Args:
        name: The document's name, e.g. "q3-report".
    """
    text = LIBRARY.get(name)
    if text is None:
        return f"No document {name!r}; the library has: {', '.join(LIBRARY)}."
    ctx.shared.setdefault("documents", {})[name] = text
    return f"Opened {name!r} ({len(text.split())} words) as document id {name!r}."


def research_instructions(ctx: RunContext) -> str:
    task = ctx.handoff.payload if ctx.handoff is not None else None
    if not isinstance(task, ResearchTask):
        return "You analyse documents. Ask for a document id, a context and an output shape."
    document = ctx.shared.get("documents", {}).get(task.document, "(document not found)")
    return (f"You analyse documents for colleagues.\nContext: {task.context}\n"
            f"Answer as: {task.expected_output}\n\nDocument {task.document!r}:\n{document}")


reference = Agent(
    "reference", display_name="Reference desk", icon="📚",
    description="Finds documents and answers questions about them.",
    instructions="Open the document the user means, then delegate its analysis to research "
    "with the document id, the context and the expected output. Relay the answer.",
    tools=[open_document],
    handoffs=[Handoff("research", returns=True, payload=ResearchTask, history="none",
                      description="Ask the research analyst to analyse a document you "
                      "opened. Pass the document id, not its text.")],
)
research = Agent(
    "research", display_name="Research analyst", icon="🔬", color="#0891b2",
    description="Analyses one document for a stated purpose.",
    instructions=research_instructions, user_selectable=False,
)
team = Team([reference, research])

QUESTION = "What does the Q3 report say about support load? Three bullets for the board."


def script() -> ScriptedModel:
    return ScriptedModel([
        call("open_document", name="q3-report"),
        transfer("research", task="Summarise what the Q3 report says about support load.",
                 reason="Analyse support load in the Q3 report.",
                 payload={"document": "q3-report", "context": "A board update on support",
                          "expected_output": "3 bullet points"}),
        reply("- Tickets per customer rose 8%\n- Most are about invoices\n"
              "- Headcount is flat at 41, so load per agent grew"),
        reply("From the Q3 report, for the board:\n- Tickets per customer rose 8%\n"
              "- Most are about invoices\n- Headcount is flat at 41, so load per agent grew"),
    ])


async def main() -> int:
    model = real_model() or script()
    announce(model)
    runner = Runner(team, model=model, store="memory://")
    result = await play(runner, "research-1", [QUESTION])
    asked = next((r for r in result.handoffs if r.target == "research"), None)
    if asked is not None:
        print(f"the delegation carried {asked.payload} "
              f"({len(str(asked.payload))} characters; the document stayed in shared memory)")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
