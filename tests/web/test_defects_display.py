"""The page's defects found trying it as a customer, an operator and a developer would
(issue 27, section 1, items 8, 11 and 12; the others are in test_defects.py): each test
fails on the page as it was, and passes now."""

from __future__ import annotations

from typing import Any

from .pages import CHARGED_TWICE, chat, operator_console, pick, say, turn_done, wait_until

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
