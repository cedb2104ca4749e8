"""A customer never loses a conversation without a word (issue 43, item 5): a wrong or
stale key, a deleted session or a refused event stream says why and offers a new one;
New session asks first; "Your conversations" lists every session this browser holds a
key for and switches between them, also after another tab started a new one."""

from __future__ import annotations

import json
from typing import Any

from .pages import (
    CHARGED_TWICE,
    assert_accessible,
    chat,
    confirm,
    in_view,
    say,
    seen,
    session_of,
    turn_done,
    wait_until,
)


def spoil_key(page: Any) -> str:
    """Make this browser's key of its conversation wrong (as a stale one is); its id."""
    sid, _ = session_of(page)
    page.evaluate("""() => {
      const s = JSON.parse(localStorage.getItem('handoffs.session'));
      s.token = 'not-the-key';
      localStorage.setItem('handoffs.session', JSON.stringify(s));
      const all = JSON.parse(localStorage.getItem('handoffs.sessions') || '[]');
      for (const c of all) if (c.id === s.id) c.token = 'not-the-key';
      localStorage.setItem('handoffs.sessions', JSON.stringify(all));
    }""")
    return sid


def test_a_wrong_key_on_reload_says_why_and_offers_a_new_conversation(
        sized: Any, size: str, server: str, errors: list[str]) -> None:
    page = chat(sized, server, errors)
    say(page, "hello")
    turn_done(page, 1)
    sid = spoil_key(page)
    page.reload()
    notice = page.locator("#notice")
    notice.wait_for()
    assert in_view(page, "#notice"), seen(page, "#notice")
    assert "can no longer be opened" in notice.inner_text() and sid in notice.inner_text()
    # Nothing was started behind the person's back.
    assert page.locator("#session-id").inner_text() == ""
    assert session_of(page)[0] == sid
    mine = page.locator(f"#conversations li[data-session='{sid}']")
    assert "can't be opened" in mine.inner_text()
    assert_accessible(page, f"a conversation that cannot be opened ({size})")
    # Sending says why too, and keeps the text.
    say(page, "are you there?")
    assert "can no longer be opened" in page.locator("#send-error").inner_text()
    assert page.input_value("#text") == "are you there?"
    assert in_view(page, "#notice button.start-new")
    page.click("#notice button.start-new")
    page.wait_for_selector("#connection[data-state=live]")
    assert session_of(page)[0] != sid and not page.locator("#notice").is_visible()
    assert in_view(page, "#welcome")
    assert page.locator(f"#conversations li[data-session='{sid}']").count() == 1
    assert not errors


def test_a_deleted_conversation_on_reload_says_it_no_longer_exists(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    sid, token = session_of(page)
    gone = page.evaluate("""([sid, token]) => fetch(`v1/sessions/${sid}`, {method: 'DELETE',
        headers: {Authorization: `Bearer ${token}`}}).then(r => r.status)""", [sid, token])
    assert gone == 204
    page.reload()
    page.locator("#notice").wait_for()
    assert "no longer exists" in page.locator("#notice").inner_text()
    assert page.locator("#session-id").inner_text() == ""
    assert not errors


def test_new_session_asks_first_and_your_conversations_switch_between_them(
        sized: Any, size: str, server: str, errors: list[str]) -> None:
    page = chat(sized, server, errors)
    say(page, CHARGED_TWICE)
    turn_done(page, 1)
    first = session_of(page)[0]
    page.click("#new-session")
    assert_accessible(page, f"New session asks first ({size})")
    confirm(page, yes=False)
    assert session_of(page)[0] == first and page.locator(".msg.user").count() == 1
    page.click("#new-session")
    confirm(page, yes=True)
    wait_until(page, f"JSON.parse(localStorage.getItem('handoffs.session')).id !== '{first}'")
    page.wait_for_selector("#connection[data-state=live]")
    assert page.locator(".msg").count() == 0 and in_view(page, "#welcome")
    listed = page.locator("#conversations > li")
    assert listed.count() == 2
    old = page.locator(f"#conversations li[data-session='{first}'] button.open")
    assert CHARGED_TWICE in old.inner_text()
    old.scroll_into_view_if_needed()
    assert in_view(page, f"#conversations li[data-session='{first}'] button.open")
    old.click()
    page.wait_for_selector("#connection[data-state=live]")
    turn_done(page, 1)
    assert session_of(page)[0] == first
    assert page.locator(".msg.agent[data-agent=refunds]").count() == 1
    assert page.locator(f"#conversations li[data-session='{first}'] button.open"
                        ).get_attribute("aria-current") == "true"
    assert not errors


def test_a_new_session_in_another_tab_leaves_a_way_back(
        context: Any, server: str, errors: list[str]) -> None:
    first = chat(context, server, errors)
    say(first, "hello")
    turn_done(first, 1)
    mine = session_of(first)[0]
    other = chat(context, server, errors)  # the same browser
    other.click("#new-session")
    confirm(other)
    wait_until(other, f"JSON.parse(localStorage.getItem('handoffs.session')).id !== '{mine}'")
    first.reload()
    first.wait_for_selector("#connection[data-state=live]")
    # The reload shows the newest conversation, and the first is one click away.
    back = first.locator(f"#conversations li[data-session='{mine}'] button.open")
    back.click()
    first.wait_for_selector("#connection[data-state=live]")
    turn_done(first, 1)
    assert session_of(first)[0] == mine
    assert not errors


def test_a_refused_event_stream_stops_and_says_what_happened(
        context: Any, server: str, errors: list[str]) -> None:
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    refusal = json.dumps({"error": {"code": "forbidden",
                                    "message": "This token does not open this session."}})
    page.route("**/events?*", lambda route: route.fulfill(
        status=403, body=refusal, content_type="application/json"))
    page.goto(server + "/")
    page.wait_for_selector("#connection[data-state=refused]", timeout=10_000)
    page.wait_for_timeout(1500)  # it stays stopped: no "reconnecting…" loop
    badge = page.locator("#connection")
    assert badge.get_attribute("data-state") == "refused"
    assert "reconnecting" not in badge.inner_text() and badge.inner_text() == "stopped"
    notice = page.locator("#notice")
    assert notice.is_visible() and "live updates of this conversation stopped" in \
        notice.inner_text() and "forbidden" in notice.inner_text()
    assert_accessible(page, "a refused event stream")
    assert not errors
