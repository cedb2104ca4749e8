"""A response the output limit cut (`ModelResponse.stop == "length"`) is a visible
outcome for the runtime, whatever the provider: the event, one more try, the code the
fallback and `eval` see, and a cut call never run."""

from __future__ import annotations

from handoffs import Agent, Runner, RunStatus, Team, tool
from handoffs.core.messages import ToolCall
from handoffs.eval import parse_jsonl, run_eval
from handoffs.models.base import ModelResponse, Usage
from handoffs.testing import ScriptedModel, reply

RAN: list[str] = []


def cut(text: str = "It all began when", tokens: int = 256) -> ModelResponse:
    return ModelResponse(text, usage=Usage(10, tokens, 1), stop="length")


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    RAN.append(order_id)
    return "refunded"


async def test_a_cut_answer_is_asked_again_and_the_whole_one_delivered() -> None:
    model = ScriptedModel([cut(), reply("In short: it began in 1999.")])

    result = await Runner(Team([Agent("solo")]), model=model).run("s", "history?")

    assert result.status is RunStatus.COMPLETED
    assert result.output == "In short: it began in 1999."
    truncated = [e.data for e in result.events if e.type == "answer_truncated"]
    assert truncated == [{"agent": "solo", "limit": 256, "delivered": False}]
    note = model.requests[1].messages[-1]
    assert type(note).__name__ == "Note" and "cut off by the output limit (256 tokens)" in \
        note.text
    assert "It all began when" not in [m.text for m in model.requests[1].messages]


async def test_the_code_reaches_eval_as_the_turns_failure() -> None:
    cases = parse_jsonl('{"id": "long", "user": "tell me all", "agent": "solo"}\n')

    report = await run_eval(Team([Agent("solo")]), cases, model=ScriptedModel([cut(), cut()]))

    turn = report.run.turns[0]
    assert turn.error == "output_truncated"
    assert report.run.failures() == {"output_truncated": 1}


async def test_a_cut_call_is_not_run_and_the_agent_hears_why() -> None:
    RAN.clear()
    call = ModelResponse("", (_call("c1", "refund", '{"order_id": "A-1"}'),),
                         Usage(5, 64, 1), stop="length")
    model = ScriptedModel([call, reply("Which order exactly?")])

    result = await Runner(Team([Agent("desk", tools=[refund])]), model=model).run("s", "A-100")

    assert RAN == [] and result.output == "Which order exactly?"
    answer = model.requests[1].messages[-1]
    assert answer.role == "tool" and answer.is_error and "was not run" in answer.text


def _call(cid: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(cid, name, arguments)
