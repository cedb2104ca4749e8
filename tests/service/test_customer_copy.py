"""The customer's copy of an event (`server.customer`): what a session's token receives
of a failure, for an event of this process and one heard from another (PostgreSQL's
NOTIFY: sent on as its text unless it carries a failure's text)."""

from __future__ import annotations

from typing import Any

from handoffs.server import customer
from handoffs.server.pubsub import Heard
from handoffs.stores.rows import dumps

FAILED_TOOL = {"type": "tool_result", "session_id": "s", "turn": 1, "agent": "a",
               "tool": "check", "call_id": "c1", "is_error": True, "seq": 4,
               "text": "Tool 'check' failed: RuntimeError: refused by db.internal:5432"}


def heard(event: dict[str, Any]) -> Heard:
    return Heard(event["seq"], event["type"], dumps(event))


def test_a_failed_tools_result_reaches_a_customer_as_a_sentence_from_either_process() -> None:
    for e in (dict(FAILED_TOOL), heard(FAILED_TOOL)):
        shown = customer.delivered(e)
        assert shown is not None and shown["text"] == customer.TOOL_FAILED
        assert "db.internal" not in dumps(shown) and shown["seq"] == 4


def test_an_event_with_no_failure_goes_on_as_it_came() -> None:
    fine = {**FAILED_TOOL, "is_error": False, "text": "shipped"}
    e = heard(fine)
    assert customer.delivered(e) is e  # not decoded, sent as its text
    refused = {**FAILED_TOOL, "text": "A person rejected this call (fraud check)."}
    assert customer.delivered(refused) is refused  # a person's sentence, not internal


def test_a_failed_turn_and_a_fallback_reach_a_customer_with_their_code_only() -> None:
    failed = {"type": "run_failed", "seq": 9, "code": "auth_error",
              "message": "Incorrect API key provided: sk-...abcd.",
              "result": {"status": "failed", "handoffs": [
                  {"reason": "error_recovery", "explanation": "a failed: sk-...abcd"}],
                  "error": {"code": "auth_error", "message": "sk-...abcd", "agent": "a"}}}
    for e in (failed, heard(failed)):
        shown = customer.delivered(e)
        assert shown is not None and "sk-" not in dumps(shown)
        assert (shown["code"], shown["message"]) == ("auth_error", customer.GENERIC)
    assert customer.delivered({"type": "model_request", "seq": 1}) is None
