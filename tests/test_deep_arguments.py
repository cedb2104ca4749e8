"""Arguments nested deeper than the parser or the validator can go are feedback to the
model, like malformed JSON: the turn goes on, it does not fail with `internal_error`."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel

from handoffs import Agent, Handoff, Runner, RunStatus, Team, ToolResult, tool
from handoffs.testing import ScriptedModel, raw_call, reply

DEEP = '{"data": ' + "[" * 100_000 + "]" * 100_000 + "}"
"""Far deeper than `json` can read (it raises RecursionError)."""


def _depth(value: Any) -> int:
    return 1 + max((_depth(v) for v in value), default=0) if isinstance(value, list) else 0


Walked = Annotated[list[Any], AfterValidator(lambda v: (_depth(v), v)[1])]
"""A list whose validator walks it recursively: deep enough input overflows the stack
while pydantic validates it."""


def nested(depth: int) -> str:
    return '{"data": ' + "[" * depth + "]" * depth + "}"


@tool
def store(data: Walked) -> str:
    """Store some data."""
    return "stored"


def last_result(model: ScriptedModel, request: int) -> ToolResult:
    results = [m for m in model.requests[request].messages if isinstance(m, ToolResult)]
    return results[-1]


async def test_arguments_too_deep_to_parse_are_feedback_and_the_turn_goes_on() -> None:
    team = Team([Agent("keeper", tools=[store])])
    model = ScriptedModel([raw_call("store", DEEP), reply("Sorry, stored nothing.")])
    result = await Runner(team, model=model).run("s", "store this")

    assert result.status is RunStatus.COMPLETED and result.output == "Sorry, stored nothing."
    fed_back = last_result(model, 1)
    assert fed_back.is_error and "nested too deeply" in fed_back.text


async def test_arguments_too_deep_to_validate_are_feedback_and_the_turn_goes_on() -> None:
    team = Team([Agent("keeper", tools=[store])])
    # json reads 600 levels; the validator's recursive walk does not survive them.
    model = ScriptedModel([raw_call("store", nested(600)), reply("Could not store it.")])
    result = await Runner(team, model=model).run("s", "store this")

    assert result.status is RunStatus.COMPLETED and result.output == "Could not store it."
    fed_back = last_result(model, 1)
    assert fed_back.is_error
    assert "do not match its schema" in fed_back.text and "too deeply" in fed_back.text


class Deep(BaseModel):
    data: Walked


async def test_handoff_arguments_and_payloads_too_deep_are_refused_with_feedback() -> None:
    team = Team([Agent("triage", handoffs=[Handoff("billing"),
                                           Handoff("archive", payload=Deep)]),
                 Agent("billing"), Agent("archive")])
    model = ScriptedModel([
        raw_call("transfer_to_billing", DEEP),
        raw_call("transfer_to_archive", '{"payload": ' + nested(600) + "}"),
        reply("I'll answer myself."),
    ])
    result = await Runner(team, model=model).run("s", "help")

    assert result.status is RunStatus.COMPLETED and result.agent == "triage"
    assert [(r.target, r.rejection) for r in result.handoffs] == [
        ("billing", "invalid_payload"), ("archive", "invalid_payload")]
    assert "nested too deeply" in last_result(model, 1).text
    assert "too deeply" in last_result(model, 2).text


async def test_a_tool_result_too_deep_to_render_is_shown_as_such() -> None:
    @tool
    def tower() -> list[Any]:
        """Build a tall tower."""
        value: list[Any] = []
        for _ in range(100_000):
            value = [value]
        return value

    team = Team([Agent("builder", tools=[tower])])
    model = ScriptedModel([raw_call("tower", "{}"), reply("Built.")])
    result = await Runner(team, model=model).run("s", "build")

    assert result.status is RunStatus.COMPLETED
    assert last_result(model, 1).text == "(a list nested too deeply to show)"
