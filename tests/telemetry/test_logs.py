"""Logs: turns, handoffs (accepted and refused), tool errors and failed turns, each record
with `session_id`, `turn` and `agent` as extra fields, so a JSON formatter picks them up."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from handoffs import Agent, Handoff, Runner, Team
from handoffs.testing import ScriptedModel, reply, transfer

from .test_spans import busy_model, busy_team


class JSONFormatter(logging.Formatter):
    """What an application's JSON log formatter does with our records."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps({"level": record.levelname, "logger": record.name,
                           "message": record.getMessage(),
                           "session_id": getattr(record, "session_id", None),
                           "turn": getattr(record, "turn", None),
                           "agent": getattr(record, "agent", None),
                           "traceback": bool(record.exc_info)})


async def test_a_busy_turn_tells_its_story_in_the_logs() -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("handoffs")
    keep = Keep(logging.DEBUG)
    keep.setFormatter(JSONFormatter())
    logger.addHandler(keep)
    old = logger.level
    logger.setLevel(logging.INFO)
    try:
        runner = Runner(busy_team(), model=busy_model())
        await runner.run("sess-7", "I was charged twice")
    finally:
        logger.removeHandler(keep)
        logger.setLevel(old)

    lines = [json.loads(keep.format(r)) for r in records]
    story = [(d["level"], d["message"].split(":")[0], d["agent"]) for d in lines]
    assert story == [
        ("INFO", "turn 1 of sess-7 started with triage", "triage"),
        ("WARNING", "tool lookup of triage failed", "triage"),
        ("INFO", "handoff triage -> research accepted (llm, delegation)", "triage"),
        ("INFO", "handoff triage -> facts accepted (llm, delegation)", "triage"),
        ("INFO", "handoff triage -> nobody refused (unknown_target)", "triage"),
        ("INFO", "handoff triage -> billing accepted (llm)", "triage"),
        ("INFO", "handoff billing -> support accepted (error_recovery)", "billing"),
        ("INFO", "turn 1 of sess-7 ended completed with support", "support"),
    ]
    assert {(d["session_id"], d["turn"]) for d in lines} == {("sess-7", 1)}
    assert [d["traceback"] for d in lines] == [False, True] + [False] * 6
    accepted = next(d for d in lines if "-> billing accepted" in d["message"])
    # the model's reason is content: only with the capture switch (below)
    assert accepted["message"] == "handoff triage -> billing accepted (llm)"
    recovered = next(d for d in lines if "-> support accepted" in d["message"])
    assert recovered["message"].endswith(": billing failed (guardrail_tripped): No refunds "
                                         "here.")  # the runtime's own explanation


@pytest.mark.parametrize("switch", ["option", "environment"])
async def test_the_models_reason_is_logged_only_when_content_is_captured(
        switch: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Traces keep the model-written reason out unless content capture is on; logs follow
    the same switch (`Telemetry(capture_content=True)`, or the GenAI conventions'
    environment variable), whether or not the turn is traced."""
    from handoffs.telemetry import Telemetry, config

    if switch == "option":
        telemetry: Any = Telemetry(capture_content=True)
    else:
        monkeypatch.setattr(config, "AUTO", Telemetry(capture_content=True))
        telemetry = False  # off for traces: the environment's switch still says
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = ScriptedModel({"triage": [transfer("billing", reason="card ending 4242")],
                           "billing": [reply("Done.")]})
    with caplog.at_level(logging.INFO, logger="handoffs"):
        await Runner(team, model=model, telemetry=telemetry).run("s", "hi")
        await Runner(team, model=ScriptedModel({
            "triage": [transfer("billing", reason="card ending 4242")],
            "billing": [reply("Done.")]})).run("t", "hi")

    moves = [r.getMessage() for r in caplog.records if "accepted" in r.getMessage()]
    said = "handoff triage -> billing accepted (llm): card ending 4242"
    unsaid = "handoff triage -> billing accepted (llm)"
    # the second runner follows the environment's switch (its default Telemetry)
    assert moves == [said, unsaid] if switch == "option" else [said, said]


async def test_a_failed_turn_is_a_warning_with_its_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    runner = Runner(Team([Agent("triage")]), model=ScriptedModel([RuntimeError("boom")]))
    with caplog.at_level(logging.INFO, logger="handoffs"):
        await runner.run("s", "hi")

    [failed] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert failed.getMessage().startswith("turn 1 of s failed (model_error)")
    assert failed.exc_info is not None and failed.exc_info[1] is not None
    assert (failed.session_id, failed.turn, failed.agent) == ("s", 1, "triage")  # type: ignore[attr-defined]


async def test_a_users_pick_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    runner = Runner(Team([Agent("triage"), Agent("billing")]))
    with caplog.at_level(logging.INFO, logger="handoffs"):
        await runner.select_agent("s", "billing")

    [picked] = caplog.records
    assert picked.getMessage() == "user picked billing: handoff triage -> billing accepted"
    assert (picked.session_id, picked.agent) == ("s", "triage")  # type: ignore[attr-defined]


async def test_a_delegation_inside_a_transfer_logs_each_move(
        caplog: pytest.LogCaptureFixture) -> None:
    team = Team([Agent("triage", handoffs=["billing"]),
                 Agent("billing", handoffs=[Handoff("ledger", returns=True)]),
                 Agent("ledger")])
    model = ScriptedModel({"triage": [transfer("billing", reason="bill")],
                           "billing": [transfer("ledger", reason="sum", task="Sum it."),
                                       reply("Total 12.")],
                           "ledger": [reply("12")]})
    with caplog.at_level(logging.INFO, logger="handoffs.runtime"):
        await Runner(team, model=model).run("s", "hi")

    moves = [r.getMessage() for r in caplog.records if "accepted" in r.getMessage()]
    assert moves == ["handoff triage -> billing accepted (llm)",
                     "handoff billing -> ledger accepted (llm, delegation)"]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
async def test_lock_waits_are_debug_records_with_the_session(
        kind: str, tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A turn that waits for another turn on its session says so at DEBUG, when it starts
    waiting and when it got the lock: in this process (memory, and every store's
    in-process queue) and across processes (a second store object on the same data)."""
    from stores.conftest import backend_for

    async with backend_for(kind, tmp_path) as backend:
        first, second = backend.open(), backend.open()
        await first.load("sess-3")  # both opened (and migrated) before the race
        await second.load("sess-3")
        with caplog.at_level(logging.DEBUG, logger="handoffs.stores"):
            async with first.lock("sess-3"):
                waiter = asyncio.ensure_future(_hold(second, "sess-3"))
                for _ in range(500):  # until the second says it waits
                    if any("waiting" in r.getMessage() for r in caplog.records):
                        break
                    await asyncio.sleep(0.01)
            await waiter

    waits = [r for r in caplog.records if "wait" in r.getMessage()]
    assert [r.levelno for r in waits] == [logging.DEBUG, logging.DEBUG]
    assert "waiting" in waits[0].getMessage() and "waited" in waits[1].getMessage()
    assert {getattr(r, "session_id", None) for r in waits} == {"sess-3"}


async def _hold(store: Any, session_id: str) -> None:
    async with store.lock(session_id):
        pass
