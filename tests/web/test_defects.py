"""The page's defects found trying it as a customer, an operator and a developer would
(issue 27, section 1): each test fails on the page as it was, and passes now."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .conftest import OPERATOR_KEY, Proxy, Served, free_port, open_page, start_test_server
from .pages import (
    CHARGED_TWICE,
    assert_accessible,
    chat,
    escalate,
    operator_console,
    pick,
    say,
    session_of,
    stored_events,
    turn_done,
    visible,
    wait_until,
)

# -- 1. a server crash mid-turn -----------------------------------------------------------


def test_after_a_crash_mid_turn_the_page_resyncs_and_shows_the_turn_interrupted(
        context: Any, tmp_path: Path, errors: list[str]) -> None:
    store = f"sqlite:///{tmp_path / 'sessions.db'}"
    slow = {"HANDOFFS_WEB_PAUSE": "0.15"}
    servers: list[Served] = [start_test_server("--store", store, env=slow)]
    proxy = Proxy(servers[0].port)
    try:
        base = f"http://127.0.0.1:{proxy.port}"
        page = chat(context, base, errors)
        say(page, CHARGED_TWICE)
        page.wait_for_selector(".messages > .step.handoff")  # mid-turn
        servers[0].kill()
        proxy.cut()
        servers.append(start_test_server("--store", store, env=slow))
        proxy.target = servers[1].port
        # The page is back on what the store holds: the message, interrupted, and Send.
        block = page.locator("#messages li.interrupted")
        block.wait_for()
        assert CHARGED_TWICE in block.locator(".msg.user").inner_text()
        assert "Interrupted" in block.inner_text()
        wait_until(page, "!document.querySelector('#send').disabled")
        page.wait_for_selector("#connection[data-state=live]")
        assert "is answering" not in page.locator("#status").inner_text()
        assert "interrupted" in page.locator("#status").inner_text()
        # What it had seen live of the dead turn is gone: the store never held it.
        assert page.locator(".messages > .step.handoff, .msg.agent").count() == 0
        assert page.locator("#timeline .turn.interrupted[data-turn='1']").count() == 1
        assert_accessible(page, "the chat after a crash")

        # The next turn shows in full, its own message in its own bubble.
        say(page, "Also, where is my invoice?")
        turn_done(page, 2)
        users = page.locator("#messages > .msg.user")
        assert users.count() == 1
        assert users.inner_text().endswith("Also, where is my invoice?")
        assert "answered with the next message" in block.inner_text()
        sid, token = session_of(page)
        assert page.evaluate("window.handoffsPage.events.map(e => e.seq)") == \
            [e["seq"] for e in stored_events(servers[1].url, sid, token)]

        # A reload shows the same conversation: nothing lost, nothing twice.
        page.reload()
        page.wait_for_selector("#connection[data-state=live]")
        turn_done(page, 2)
        again = page.locator("#messages li.interrupted")
        again.wait_for()
        assert CHARGED_TWICE in again.inner_text()
        assert page.locator("#messages > .msg.user").count() == 1
        assert page.locator("#messages > .msg.user").inner_text().endswith(
            "Also, where is my invoice?")
        assert page.locator("#timeline .turn[data-turn='1']").count() == 1
    finally:
        proxy.close()
        for s in servers:
            s.stop()
    assert not errors


# -- 2. the console shows what it should, when it should ----------------------------------


def test_the_console_shows_the_login_or_the_queue_and_the_answer_box_only_with_a_session(
        context: Any, server: str, errors: list[str]) -> None:
    console = open_page(context, server + "/operator", errors)
    console.wait_for_selector("#connection[data-state=closed]")
    assert visible(console, "#login")
    assert not visible(console, "#queue-title") and not visible(console, "#reply")
    assert_accessible(console, "the console before login")
    console.fill("#key", "not the key")
    console.press("#key", "Enter")
    console.wait_for_selector("#login .error:not(:empty)")
    assert "forbidden" in console.locator("#login .error").inner_text()
    console.fill("#key", OPERATOR_KEY)
    console.press("#key", "Enter")
    console.wait_for_selector("#queue-title", state="visible")
    assert not visible(console, "#login") and not visible(console, "#login .error")
    # No session is open: nothing to answer.
    assert not visible(console, "#reply") and not visible(console, "#text")
    assert_accessible(console, "the console logged in, no session open")
    assert not errors


# -- 3. a pick is an event -----------------------------------------------------------------


def test_a_pick_reaches_every_tab_and_survives_a_reload(
        context: Any, server: str, errors: list[str]) -> None:
    first = chat(context, server, errors)
    second = chat(context, server, errors)  # the same browser: the same session
    assert session_of(first) == session_of(second)
    pick(first, "technical")
    second.wait_for_selector("#active-agent [data-agent=technical]")
    second.wait_for_selector(".step.handoff.picked[data-target=technical]")
    second.wait_for_selector("#timeline .entry.handoff")
    assert "picked by the user" in second.locator("#timeline .entry.handoff").inner_text()
    say(second, "My dock keeps disconnecting")
    turn_done(first, 1)
    assert first.locator(".messages > .msg.agent").last.get_attribute("data-agent") == \
        "technical"
    first.reload()
    first.wait_for_selector("#connection[data-state=live]")
    turn_done(first, 1)
    assert first.locator(".step.handoff.picked[data-target=technical]").count() == 1
    assert first.locator("#timeline .entry.handoff").count() == 1
    assert first.locator(".graph .route.taken[data-source=triage][data-target=technical] "
                         "text.step-no").text_content() == "1"
    assert not errors


def test_the_operator_sees_a_pick_live(context: Any, new_context: Any, server: str,
                                       errors: list[str]) -> None:
    user = chat(context, server, errors)
    sid = escalate(user)
    console = operator_console(new_context(), server, errors, sid)
    console.wait_for_selector("#open-title [data-agent=operator]")
    # The operator hands back to tech support; the user then picks billing.
    console.fill("#text", "Back to tech support for you.")
    console.select_option("#handback", "technical")
    console.click("#send")
    user.wait_for_selector("#active-agent [data-agent=technical]")
    # The session left the queue, but a console that keeps it open follows it.
    pick(user, "billing")
    console.wait_for_selector("#open-title [data-agent=billing]")
    console.wait_for_selector("#messages .step.handoff.picked[data-target=billing]")
    assert not errors


# -- 4. a pick while a call waits for approval ---------------------------------------------


def test_a_pick_while_a_call_waits_for_approval_is_refused_and_changes_nothing(
        context: Any, new_context: Any, server: str, errors: list[str]) -> None:
    user = chat(context, server, errors)
    pick(user, "cashier")
    user.wait_for_selector("#active-agent [data-agent=cashier]")
    say(user, "A voucher for the late delivery, please.")
    turn_done(user, 1)
    pick(user, "billing")
    error = user.locator("#picker .error")
    error.wait_for()
    assert "waiting_for_approval" in error.inner_text()
    assert "approve or reject" in error.inner_text()
    assert "runner." not in error.inner_text()
    sid = session_of(user)[0]
    console = operator_console(new_context(), server, errors, sid)
    console.locator("#approvals button.approve").click()
    user.locator(".msg[data-agent=cashier]", has_text="voucher of 20 EUR sent").wait_for()
    # The pick was refused, not undone later: the cashier still holds the session.
    assert user.locator("#active-agent [data-agent=cashier]").count() == 1
    assert user.locator(".step.handoff.picked[data-target=billing]").count() == 0
    assert not errors


# -- 5 and 11: after the operator hands back ------------------------------------------------


def test_after_the_hand_back_the_user_is_not_told_to_wait_and_it_is_said_who_handed_back(
        context: Any, new_context: Any, server: str, errors: list[str]) -> None:
    user = chat(context, server, errors)
    sid = escalate(user)
    assert "Waiting for" in user.locator("#status").inner_text()
    console = operator_console(new_context(), server, errors, sid)
    console.fill("#text", "Done: I reset your account.")
    console.select_option("#handback", "technical")
    console.click("#send")
    step = user.locator(".step.handoff[data-source=operator][data-target=technical]")
    step.wait_for()
    wait_until(user, "!document.querySelector('#status').textContent.includes('Waiting')")
    assert "Tech support answers your next message" in user.locator("#status").inner_text()
    assert step.locator(".tag").inner_text().lower() == "handed back by a person"
    console.wait_for_selector(
        "#messages .step.handoff[data-source=operator][data-target=technical]")
    assert "handed back by a person" in console.locator(
        "#messages .step.handoff[data-source=operator] .tag").inner_text().lower()
    assert_accessible(user, "the chat after a hand-back")
    assert not errors


# -- 6. typed text is kept until the server has it ------------------------------------------


def test_a_message_the_server_refuses_stays_in_the_box_with_the_reason_in_plain_words(
        context: Any, server: str, proxy: Proxy, errors: list[str]) -> None:
    page = chat(context, f"http://127.0.0.1:{proxy.port}", errors)
    too_long = "x" * 100_001
    page.fill("#text", too_long)
    page.click("#send")
    error = page.locator("#send-error")
    error.wait_for()
    assert "100,001 characters" in error.inner_text() and "Shorten it" in error.inner_text()
    assert page.input_value("#text") == too_long
    # The server can't be reached: kept, and said so.
    live = proxy.target
    proxy.target = free_port()  # nothing listens there
    proxy.cut()
    say(page, "Where is my order A-1002?")
    wait_until(page, "document.querySelector('#send-error').textContent.includes('reached')")
    assert page.input_value("#text") == "Where is my order A-1002?"
    assert_accessible(page, "the chat with a message not sent")
    proxy.target = live
    page.wait_for_selector("#connection[data-state=live]", timeout=20_000)
    page.click("#send")
    turn_done(page, 1)
    assert page.input_value("#text") == ""
    assert page.locator("#send-error").inner_text() == ""
    assert page.locator(".msg.user").inner_text().endswith("Where is my order A-1002?")
    assert not errors


def test_a_message_while_a_call_waits_for_approval_is_kept_with_a_sentence_for_people(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    pick(page, "cashier")
    page.wait_for_selector("#active-agent [data-agent=cashier]")
    say(page, "A voucher, please.")
    turn_done(page, 1)
    say(page, "Hello? Is anyone there?")
    error = page.locator("#send-error")
    error.wait_for()
    assert "approve or reject" in error.inner_text()
    assert "runner." not in error.inner_text() and "decide with" not in error.inner_text()
    assert page.input_value("#text") == "Hello? Is anyone there?"
    assert not errors


# -- 7. after a person's decision ---------------------------------------------------------


def decided(context: Any, new_context: Any, server: str, errors: list[str],
            approve: bool) -> Any:
    user = chat(context, server, errors)
    pick(user, "cashier")
    user.wait_for_selector("#active-agent [data-agent=cashier]")
    say(user, "A voucher for the late delivery, please.")
    turn_done(user, 1)
    console = operator_console(new_context(), server, errors, session_of(user)[0])
    if approve:
        console.locator("#approvals button.approve").click()
    else:
        console.fill("#approvals .reason", "Vouchers are for orders over 50 EUR.")
        console.locator("#approvals button.reject").click()
    user.wait_for_selector(".step.decided")
    wait_until(user, "document.querySelectorAll('.turn[data-turn=\"1\"] .timing').length == 2")
    return user


def test_an_approval_adds_no_empty_bubble_and_the_turn_is_listed_once(
        context: Any, new_context: Any, server: str, errors: list[str]) -> None:
    user = decided(context, new_context, server, errors, approve=True)
    user.locator(".msg[data-agent=cashier]", has_text="voucher of 20 EUR sent").wait_for()
    assert user.locator(".msg.user").count() == 1
    assert [t.strip() for t in user.locator(".msg.user .text").all_inner_texts()] == \
        ["A voucher for the late delivery, please."]
    assert user.locator("#timeline h3", has_text=re.compile("^Turn 1")).count() == 1
    assert user.locator("#timeline .turn").count() == 1
    assert "part 2" in user.locator("#timeline .timing caption").last.inner_text()
    assert not errors


def test_a_rejection_shows_the_persons_reason_not_the_sentence_for_the_model(
        context: Any, new_context: Any, server: str, errors: list[str]) -> None:
    user = decided(context, new_context, server, errors, approve=False)
    conversation = user.locator("#messages").inner_text()
    assert "rejected" in conversation and "Vouchers are for orders over 50 EUR." in conversation
    assert "Do not retry it" not in conversation
    assert user.locator(".msg.user").count() == 1
    assert not errors


# -- 8. long words, following the answer, a server down at load ----------------------------


def test_a_very_long_word_wraps_inside_the_conversation(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    say(page, "I was charged twice: " + "A" * 12_000)  # the handoff reason repeats it
    turn_done(page, 1)
    widths = page.evaluate("""() => { const m = document.querySelector('#messages');
        return [m.scrollWidth, m.clientWidth, document.documentElement.scrollWidth,
                window.innerWidth]; }""")
    assert widths[0] <= widths[1] + 1 and widths[2] <= widths[3], widths
    assert not errors


def test_the_chat_follows_a_streamed_answer_to_its_end(
        new_context: Any, server: str, errors: list[str]) -> None:
    page = chat(new_context(viewport={"width": 1280, "height": 560}), server, errors)
    pick(page, "notes")
    page.wait_for_selector("#active-agent [data-agent=notes]")
    for n in (1, 2):
        say(page, f"What about my orders? ({n})")
        page.wait_for_selector(f".turn[data-turn='{n}'] .timing")
    at_end = """() => { const m = document.querySelector('#messages');
        return m.scrollHeight > m.clientHeight
            && m.scrollHeight - m.scrollTop - m.clientHeight < 4; }"""
    assert page.evaluate(at_end)
    # Mid-answer too: the newest text is in view while it streams.
    say(page, "And again? (3)")
    page.wait_for_selector(".msg.streaming")
    page.wait_for_timeout(400)
    assert page.evaluate(at_end)
    turn_done(page, 3)
    assert page.evaluate(at_end)
    assert not errors


def test_a_page_that_loads_while_the_server_is_unreachable_connects_once_it_answers(
        context: Any, server: str, errors: list[str]) -> None:
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))

    def refuse(route: Any) -> None:
        route.abort()

    page.route("**/v1/team", refuse)
    page.goto(server + "/")
    wait_until(page, "document.querySelector('#status').textContent.includes('Trying again')")
    page.unroute("**/v1/team", refuse)
    page.wait_for_selector("#connection[data-state=live]", timeout=20_000)
    say(page, "hi")
    turn_done(page, 1)
    assert not errors


# -- 11. smaller ones ------------------------------------------------------------------------


def test_the_timeline_names_each_kind_in_the_chats_words(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    say(page, CHARGED_TWICE)
    turn_done(page, 1)
    chat_kind = page.locator(".messages > .step.handoff .tag").first.inner_text().lower()
    timeline_kind = page.locator("#timeline .entry.handoff .meta").first.inner_text()
    assert chat_kind == "chosen by the agent" == timeline_kind.strip()
    assert "llm" not in timeline_kind
    assert not errors


def test_the_graph_names_every_agent_whole_and_its_step_numbers_do_not_overlap(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    say(page, CHARGED_TWICE)
    turn_done(page, 1)
    boxes = page.evaluate("""() => [...document.querySelectorAll('.graph .node')].map((g) => {
        const box = g.querySelector('rect').getBoundingClientRect();
        const label = g.querySelector('text.label');
        const text = label.getBoundingClientRect();
        return [g.dataset.agent, label.textContent, text.right <= box.right + 0.5,
                text.left >= box.left]; })""")
    names = {name: shown for name, shown, _, _ in boxes}
    assert names["operator"] == "Operator (human)" and names["policy"] == "Policy desk"
    assert all(inside_right and inside_left for _, _, inside_right, inside_left in boxes), boxes
    steps = page.evaluate("""() => [...document.querySelectorAll('.graph rect.step-no')].map(
        (r) => { const b = r.getBoundingClientRect();
                 return [b.left, b.top, b.right, b.bottom]; })""")
    assert len(steps) == 3
    for i, a in enumerate(steps):
        for b in steps[i + 1:]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, (a, b)
    assert not errors


def test_the_console_says_live_while_it_follows_the_queue(
        context: Any, server: str, errors: list[str]) -> None:
    console = operator_console(context, server, errors)
    badge = console.locator("#connection")
    console.wait_for_timeout(2_000)  # a poll or two of the queue
    assert "live" in badge.inner_text() and "offline" not in badge.inner_text()
    assert not errors


def test_the_pages_files_arrive_compressed(context: Any, server: str, errors: list[str]) -> None:
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    encodings: dict[str, str | None] = {}
    page.on("response", lambda r: encodings.__setitem__(
        r.url.rsplit("/", 1)[-1], r.headers.get("content-encoding")))
    page.goto(server + "/")
    page.wait_for_selector("#connection[data-state=live]")
    assert encodings["chat.js"] == "gzip" and encodings["app.css"] == "gzip"
    assert not errors


# -- 12. the demo team ---------------------------------------------------------------------


def test_a_charge_is_refunded_once_however_often_it_is_reported(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    for n in (1, 2, 3):
        say(page, CHARGED_TWICE)
        turn_done(page, n)
    answers = page.locator(".messages > .msg.agent[data-agent=refunds]").all_inner_texts()
    assert len(answers) == 3
    assert "R-0001" in answers[0] and "Refund of $129.00" in answers[0]
    for later in answers[1:]:
        assert "Already refunded" in later and "R-0001" in later and "R-0002" not in later
    assert "R-0002" not in page.locator("#messages").inner_text()
    assert not errors


def test_asking_triage_for_a_person_brings_the_operator_and_the_picker_agrees_with_the_team(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    team = page.evaluate("fetch('v1/team').then(r => r.json())")
    offered = page.eval_on_selector_all("#agent-select option", "os => os.map(o => o.value)")
    assert offered == [a["name"] for a in team["agents"] if a["user_selectable"]]
    operator = next(a for a in team["agents"] if a["name"] == "operator")
    assert operator["user_selectable"] is False and "operator" not in offered
    say(page, "Can I talk to a person, please?")
    page.wait_for_selector(".step.waiting")
    turn_done(page, 1)
    assert page.locator("#active-agent [data-agent=operator]").count() == 1
    assert "Hello! I can send you" not in page.locator("#messages").inner_text()
    assert not errors
