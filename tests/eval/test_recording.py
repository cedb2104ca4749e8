"""The recording model: what each request carried and what came back, streamed or not,
failed or not, kept only inside the turn being played."""

from __future__ import annotations

import pytest

from handoffs import UserMessage
from handoffs.errors import ModelError
from handoffs.eval import Recorder, parse_jsonl, recording, run_eval
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta

from .teams import DeskModel, build_team


def request(text: str) -> ModelRequest:
    return ModelRequest(agent="front", system="Route.",
                        messages=[UserMessage(text, "front")], tools=())


async def test_a_streamed_answer_is_recorded_once_whole() -> None:
    model = Recorder(DeskModel())

    with recording() as calls:
        pieces = [p async for p in model.stream(request("hello"))]

    assert isinstance(pieces[-1], ModelResponse)
    assert [(c.agent, c.text, c.usage is not None) for c in calls] == [
        ("front", "Hello, how can I help?", True)]
    assert calls[0].messages == [{"kind": "user", "text": "hello", "agent": "front"}]


async def test_requests_outside_a_recording_are_passed_through_unrecorded() -> None:
    model = Recorder(DeskModel())

    response = await model.complete(request("hello"))

    assert response.text == "Hello, how can I help?"


class Broken:
    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("the server said no", code="model_error")

    async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        yield TextDelta("")
        raise ModelError("the server said no", code="model_error")


async def test_a_model_that_fails_is_a_failed_turn_with_its_error_recorded() -> None:
    cases = parse_jsonl('{"id": "x", "user": "hello", "agent": "front"}\n')

    run = (await run_eval(build_team(), cases, model=Broken())).run

    (turn,) = run.turns
    assert run.failures() == {"model_error": 1} and turn.status == "failed"
    assert turn.calls and all(c.error == "ModelError: the server said no" for c in turn.calls)
    assert run.matrix == {"front": {"(failed)": 1}}


async def test_a_recording_ends_with_its_block() -> None:
    model = Recorder(DeskModel())
    with recording() as calls:
        await model.complete(request("hello"))
    await model.complete(request("hello again"))

    assert len(calls) == 1
    with pytest.raises(ModelError), recording() as failed:
        await Recorder(Broken()).complete(request("x"))
    assert failed[0].error == "ModelError: the server said no"
