"""A team whose answers the output limit cuts, for the page test of truncation: `writer`'s
first answer is cut (not sent; it answers again, shorter), `teller` accepts cut answers
(delivered, marked). Both stream in small pieces."""

from __future__ import annotations

from handoffs import Agent, Runner, Team
from handoffs.models.base import ModelResponse, Usage
from handoffs.testing import ScriptedModel, reply

CUT = "Your refund of 129 EUR will be sent to the card you paid with, and it usually"
"""The writer's answer the limit cut."""


def make_runner() -> Runner:
    """`handoffs serve tests.web.cut_team:make_runner`."""
    writer = Agent("writer", description="Writes long answers.", display_name="Writer")
    teller = Agent("teller", description="Tells stories, cut or not.", accept_truncated=True,
                   display_name="Teller")
    model = ScriptedModel({
        "writer": [ModelResponse(CUT, usage=Usage(40, 24, 1), stop="length"),
                   reply("Your refund of 129 EUR is on its way.")],
        "teller": [ModelResponse("Once upon a time there was a", usage=Usage(9, 8, 1),
                                 stop="length")],
    }, stream_chunks=8)
    return Runner(Team([writer, teller], entry="writer"), model=model)
