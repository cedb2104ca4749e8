"""The web page in a real browser, against a real `handoffs serve`."""

from __future__ import annotations

from typing import Any

from .conftest import OPERATOR_KEY, Proxy
from .pages import (
    CHARGED_TWICE,
    assert_accessible,
    chat,
    escalate,
    operator_console,
    say,
    session_of,
    stored_events,
    turn_done,
    wait_until,
)


def test_a_turn_with_a_handoff_shows_both_agents_and_the_handoff(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    say(page, CHARGED_TWICE)
    # The answer streams: a message is shown growing before it is whole.
    page.wait_for_selector(".msg.agent.streaming")
    turn_done(page, 1)

    handoff = page.locator(".messages > .step.handoff[data-source=triage][data-target=billing]")
    assert handoff.count() == 1
    assert "Billing question" in handoff.inner_text()
    assert page.locator(".msg.user").inner_text().endswith(CHARGED_TWICE)
    # The delegate's answer is folded under billing's step, not in the main line.
    delegation = page.locator(".step.delegation")
    assert "Policy desk" in delegation.locator("summary").inner_text()
    assert delegation.locator(".fold .msg[data-agent=policy]").count() == 1
    answer = page.locator(".messages > .msg.agent[data-agent=refunds]")
    assert "Refund of $129.00" in answer.inner_text()
    assert "Refunds" in answer.locator(".badge").inner_text()
    assert page.locator("#active-agent [data-agent=refunds]").count() == 1
    # The timeline: records with their kind, explanation and payload; tools; timings.
    timeline = page.locator("#timeline")
    assert timeline.locator(".entry.handoff").count() == 2
    assert timeline.locator(".entry.delegation").count() == 1
    page.wait_for_selector("#timeline .entry.handoff .payload")
    assert '"order_id":"A-1001"' in timeline.locator(".entry.handoff .payload").inner_text()
    assert timeline.locator(".entry.tool").count() == 2
    assert timeline.locator(".timing tbody tr").count() >= 3
    assert_accessible(page, "the chat after a turn with handoffs")
    assert not errors


def test_the_graph_highlights_the_active_agent_and_the_path_taken(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    assert page.locator(".graph .node.active").get_attribute("data-agent") == "triage"
    say(page, CHARGED_TWICE)
    turn_done(page, 1)
    active = page.locator(".graph .node.active")
    assert active.get_attribute("data-agent") == "refunds"
    assert active.get_attribute("aria-current") == "true"
    assert "active" in (active.text_content() or "")  # named, not only coloured
    taken = page.locator(".graph .route.taken")
    assert {(taken.nth(i).get_attribute("data-source"), taken.nth(i).get_attribute("data-target"))
            for i in range(taken.count())} == {("triage", "billing"), ("billing", "policy"),
                                               ("billing", "refunds")}
    assert not errors


def test_the_picker_switches_agents(context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    page.select_option("#agent-select", "technical")
    page.click("#picker button")
    page.wait_for_selector("#active-agent [data-agent=technical]")
    assert page.locator(".graph .node.active").get_attribute("data-agent") == "technical"
    page.wait_for_selector(".step.handoff.picked[data-target=technical]")
    assert page.locator(".step.handoff.picked[data-target=technical]").count() == 1
    say(page, "My dock keeps disconnecting")
    turn_done(page, 1)
    assert page.locator(".messages > .msg.agent").last.get_attribute("data-agent") == "technical"
    assert not errors


def test_the_page_works_under_its_content_security_policy(
        context: Any, server: str, errors: list[str]) -> None:
    refused: list[str] = []

    def note(message: Any) -> None:
        if "Content Security Policy" in message.text:
            refused.append(message.text)

    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", note)
    response = page.goto(server + "/")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    page.wait_for_selector("#connection[data-state=live]")
    say(page, CHARGED_TWICE)
    turn_done(page, 1)
    # The graph's colours are set through the CSSOM, which the policy allows.
    colour = page.evaluate("getComputedStyle(document.querySelector('#graph g.node"
                           "[data-agent=billing]')).getPropertyValue('--agent-color')")
    assert colour.strip() == "#2563eb"  # billing's colour
    # The picker offers what the server says a user may pick: no human operator.
    offered = page.eval_on_selector_all("#agent-select option", "os => os.map(o => o.value)")
    team = page.evaluate("fetch('v1/team').then(r => r.json())")
    assert offered == [a["name"] for a in team["agents"] if a["user_selectable"]]
    assert "operator" not in offered
    console = context.new_page()
    console.on("console", note)
    console.goto(server + "/operator")
    console.fill("#key", OPERATOR_KEY)
    console.press("#key", "Enter")
    console.wait_for_selector("#queue-count")
    assert refused == [] and not errors


def test_a_refused_pick_shows_its_sentence(context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    page.select_option("#agent-select", "phone")
    page.click("#picker button")
    error = page.locator("#picker .error")
    error.wait_for()
    assert "channel_unsupported" in error.inner_text()
    assert "does not serve the 'web' channel" in error.inner_text()
    assert page.locator("#active-agent [data-agent=triage]").count() == 1
    page.wait_for_selector("#timeline .entry.refused")
    assert "channel_unsupported" in page.locator("#timeline .entry.refused").inner_text()
    assert_accessible(page, "the chat with a refused pick")
    assert not errors


def test_the_operator_answers_and_hands_back_and_the_user_sees_it_live(
        browser: Any, context: Any, server: str, errors: list[str]) -> None:
    user = chat(context, server, errors)
    sid = escalate(user)
    assert user.locator("#active-agent [data-agent=operator]").count() == 1

    operator_ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        console = operator_console(operator_ctx, server, errors, sid)
        context_box = console.locator("#context")
        assert "escalation" in context_box.inner_text()
        assert "Tech support" in context_box.inner_text()
        console.wait_for_selector("#messages .msg.user")
        assert "Can a person look at my account?" in console.locator("#messages").inner_text()
        assert_accessible(console, "the console with a session open")

        console.fill("#text", "Hi, I'm Sam. I reset the dock's pairing on your account.")
        console.select_option("#handback", "technical")
        console.click("#send")
        # The user's page shows the human's message and the hand-back, live.
        human = user.locator(".msg.human[data-agent=operator]")
        human.wait_for()
        assert "I'm Sam" in human.inner_text()
        assert human.locator(".tag").inner_text().lower() == "human"
        user.wait_for_selector("#active-agent [data-agent=technical]")
        user.wait_for_selector(".step.handoff[data-source=operator][data-target=technical]")
        # The session left the queue.
        console.wait_for_selector(f"#queue li[data-session='{sid}']", state="detached")
    finally:
        operator_ctx.close()
    assert not errors


def test_the_operator_approves_a_tool_call_and_the_user_sees_the_turn_go_on(
        browser: Any, context: Any, server: str, errors: list[str]) -> None:
    user = chat(context, server, errors)
    user.select_option("#agent-select", "cashier")
    user.click("#picker button")
    user.wait_for_selector("#active-agent [data-agent=cashier]")
    say(user, "A voucher for the late delivery, please.")
    turn_done(user, 1)
    sid: str = user.locator("#session-id").inner_text()

    operator_ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        console = operator_console(operator_ctx, server, errors, sid)
        waiting = console.locator("#approvals .approval")
        waiting.wait_for()
        assert "issue_voucher" in waiting.inner_text() and "20" in waiting.inner_text()
        assert_accessible(console, "the console with a call waiting for approval")
        waiting.locator("button.approve").click()
        console.wait_for_selector("#approvals .approval", state="detached")
        # The same turn went on: the user's page shows the cashier's answer, live.
        answer = user.locator(".msg[data-agent=cashier]", has_text="voucher of 20 EUR sent")
        answer.wait_for()
        console.wait_for_selector(f"#queue li[data-session='{sid}']", state="detached")
    finally:
        operator_ctx.close()
    assert not errors


def test_a_dropped_connection_mid_turn_shows_every_event_once(
        context: Any, server: str, proxy: Proxy, errors: list[str]) -> None:
    page = chat(context, f"http://127.0.0.1:{proxy.port}", errors)
    say(page, CHARGED_TWICE)
    page.wait_for_selector(".messages > .step.handoff")
    assert proxy.cut() > 0
    wait_until(page, "window.handoffsPage.connection.reconnects >= 1")
    turn_done(page, 1)
    seqs = page.evaluate("window.handoffsPage.events.map(e => e.seq)")
    # Each once, in order, none missing: exactly what the store gives this client.
    sid, token = session_of(page)
    assert seqs == [e["seq"] for e in stored_events(server, sid, token)]
    types = page.evaluate("window.handoffsPage.events.map(e => e.type)")
    assert types[0] == "run_started" and types[-1] == "run_completed"
    assert page.locator(".msg.user").count() == 1
    assert page.locator(".messages > .step.handoff").count() == 2
    assert page.locator(".msg.agent[data-agent=refunds]").count() == 1
    assert page.locator(".msg.agent.streaming").count() == 0
    assert not errors


def test_a_reload_resumes_the_session(context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    say(page, CHARGED_TWICE)
    turn_done(page, 1)
    sid = page.locator("#session-id").inner_text()
    page.reload()
    page.wait_for_selector("#connection[data-state=live]")
    turn_done(page, 1)
    assert page.locator("#session-id").inner_text() == sid
    assert page.locator(".msg.agent[data-agent=refunds]").count() == 1
    assert page.locator("#active-agent [data-agent=refunds]").count() == 1
    page.click("#new-session")
    page.click("dialog[open] button.yes")  # New session asks first
    wait_until(page, f"document.querySelector('#session-id').textContent !== '{sid}'")
    assert page.locator(".msg").count() == 0
    assert not errors


def test_the_page_fits_a_phone(browser: Any, server: str, errors: list[str]) -> None:
    ctx = browser.new_context(viewport={"width": 390, "height": 800}, is_mobile=True)
    try:
        page = chat(ctx, server, errors)
        say(page, CHARGED_TWICE)
        turn_done(page, 1)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390
        assert page.locator("#send").is_visible()
    finally:
        ctx.close()
    assert not errors
