"""The inspector (/inspect): what each agent's model saw, the state, the records, why the
conversation moved, traces; for the operator key, and in part for a session's own token."""

from __future__ import annotations

import json
import re
from typing import Any

from .conftest import OPERATOR_KEY, TRACE_URL, open_page
from .pages import CHARGED_TWICE, assert_accessible, chat, pick, say, session_of, turn_done


def inspector(context: Any, server: str, errors: list[str], sid: str | None = None) -> Any:
    page = open_page(context, server + "/inspect" + (f"#session={sid}" if sid else ""), errors)
    page.fill("#key", OPERATOR_KEY)
    page.press("#key", "Enter")
    page.wait_for_selector("#inspector", state="visible")
    return page


def test_the_inspector_shows_what_each_agent_saw_and_answered(
        context: Any, server: str, errors: list[str]) -> None:
    user = chat(context, server, errors)
    say(user, CHARGED_TWICE)
    turn_done(user, 1)
    page = inspector(context, server, errors, session_of(user)[0])
    calls = page.locator("#calls .call")
    page.wait_for_selector("#calls .call[data-agent=refunds] .outcome:not(.muted)")
    assert [calls.nth(i).get_attribute("data-agent") for i in range(calls.count())] == \
        ["triage", "billing", "policy", "billing", "refunds", "refunds", "refunds"]
    # Refunds' first call, after billing's handoff: opened, its system text its own, the
    # route's filter (conversation) beside the transcript it filtered, then the handoff's
    # note where the handoff happened.
    refunds = page.locator("#calls .call[data-agent=refunds]").first
    details = refunds.locator("details").first
    assert details.get_attribute("open") is not None
    assert "after a handoff · view: conversation" in \
        refunds.locator("summary").first.inner_text().lower()
    system = refunds.locator("pre.system").inner_text()
    assert "You issue refunds for duplicate charges." in system
    assert "handed" not in system
    before = refunds.locator(".view.before .rows > li")
    after = refunds.locator(".view.after .rows > li")
    assert before.count() == 7 and after.count() == 2
    assert "transfer_to_billing" in refunds.locator(".view.before").inner_text()
    assert after.first.inner_text().endswith(CHARGED_TWICE)
    note = after.nth(1).inner_text()
    assert "billing handed the conversation to you" in note and '"order_id": "A-1001"' in note
    assert refunds.locator(".tools > li > code").all_inner_texts() == \
        ["lookup_order", "issue_refund", "transfer_to_triage"]
    response = refunds.locator(".response")
    assert 'lookup_order({"order_id": "A-1001"})' in response.inner_text()
    # The offline model counts no tokens: said so, not "0 → 0 tokens" (issue 43).
    assert "no token count" in refunds.locator(".outcome").inner_text()
    assert "0 → 0" not in page.locator("#calls").inner_text()
    assert re.search(r"[\d.]+ (ms|s) ·", refunds.locator(".outcome").inner_text())
    shared = json.loads(refunds.locator(".shared pre").text_content() or "{}")
    assert shared["handoff_context"]["source_agent"] == "billing"
    # The delegation: the policy desk's task in its system text, marked as delegated.
    policy = page.locator("#calls .call[data-agent=policy]")
    assert "delegated task" in policy.locator("summary").first.inner_text().lower()
    assert_accessible(page, "the inspector with a handoff's call open")

    # The state now, the records with their payloads, the timeline, the trace.
    state = page.locator("#state")
    assert '"source_agent": "billing"' in state.locator(".handoff-context").inner_text()
    assert '"last_order": "A-1001"' in state.locator(".shared-now").inner_text()
    assert "conversation from" in state.inner_text()
    records = page.locator("#records tbody tr")
    assert records.count() == 3
    assert '{"order_id":"A-1001"}' in records.nth(2).inner_text()
    assert page.locator("#timeline .entry.handoff").count() == 2
    trace = page.locator("#summary a.trace")
    trace_id = trace.inner_text()
    assert re.fullmatch(r"[0-9a-f]{32}", trace_id)
    assert trace.get_attribute("href") == TRACE_URL.replace("{trace_id}", trace_id)
    assert not errors


def test_sessions_are_found_by_id_agent_or_status(
        context: Any, new_context: Any, server: str, errors: list[str]) -> None:
    first = chat(context, server, errors)
    say(first, CHARGED_TWICE)
    turn_done(first, 1)
    refunds_sid = session_of(first)[0]
    other = chat(new_context(), server, errors)
    pick(other, "technical")
    other.wait_for_selector("#active-agent [data-agent=technical]")
    say(other, "Can a person look at my account?")
    turn_done(other, 1)
    waiting_sid = session_of(other)[0]
    page = inspector(context, server, errors)
    page.fill("#find", refunds_sid[-8:])
    rows = page.locator("#sessions li")
    assert [rows.nth(i).get_attribute("data-session") for i in range(rows.count())] == \
        [refunds_sid]
    page.fill("#find", "refunds")  # an agent, by name
    assert refunds_sid in [rows.nth(i).get_attribute("data-session") for i in range(rows.count())]
    assert waiting_sid not in [rows.nth(i).get_attribute("data-session")
                               for i in range(rows.count())]
    page.fill("#find", "")
    # The filter shows at once (no wait for the store's answer) and keeps showing after it.
    with page.expect_response(lambda r: "status=waiting_for_human" in r.url):
        page.select_option("#status-filter", "waiting_for_human")
        assert page.locator(f"#sessions li[data-session='{refunds_sid}']").count() == 0
    assert page.locator(f"#sessions li[data-session='{waiting_sid}']").is_visible()
    assert page.locator(f"#sessions li[data-session='{refunds_sid}']").count() == 0
    page.click(f"#sessions li[data-session='{waiting_sid}'] button")
    page.wait_for_selector("#calls .call[data-agent=technical]")
    assert "waiting_for_human" in page.locator("#summary").inner_text()
    assert_accessible(page, "the inspector's sessions filtered by status")
    assert not errors


def test_refused_requests_show_the_sentence_the_model_received(
        context: Any, server: str, errors: list[str]) -> None:
    user = chat(context, server, errors)
    pick(user, "notes")
    user.wait_for_selector("#active-agent [data-agent=notes]")
    say(user, "Where are my orders?")
    turn_done(user, 1)
    page = inspector(context, server, errors, session_of(user)[0])
    refused = page.locator("#timeline .entry.refused")
    refused.wait_for()
    sentence = refused.locator(".why").inner_text()
    assert "not_declared" in refused.inner_text() and sentence
    # The same sentence is what the notes agent's model read in its next request.
    second = page.locator("#calls .call[data-agent=notes]").nth(1)
    second.locator("summary").first.click()
    assert sentence in second.locator(".view.after").inner_text()
    assert "not_declared" in page.locator("#records tbody").inner_text()
    assert not errors


def test_a_sessions_own_token_shows_its_records_but_not_what_the_models_saw(
        context: Any, server: str, errors: list[str]) -> None:
    user = chat(context, server, errors)
    say(user, CHARGED_TWICE)
    turn_done(user, 1)
    user.click("#inspect-link")
    user.wait_for_selector("#own", state="visible")
    user.click("#own")
    user.wait_for_selector("#records tbody tr")
    assert "operator key only" in user.locator("#calls-note").inner_text()
    assert user.locator("#calls .call").count() == 0
    assert user.locator("#records tbody tr").count() == 3
    assert "operator key" in user.locator("#state").inner_text()
    assert not user.locator(".sessions-box").is_visible()
    user.wait_for_selector("#timeline .entry.handoff")
    assert_accessible(user, "the inspector with a session's token")
    assert not errors
