"""The inspector's "Fork from here" (issue 31): on a turn of the timeline, it opens a new
tab on a new session holding the conversation as it was before that turn; on memory,
SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from stores.conftest import PG_DSN, drop_schema, require_pg

from .conftest import start_test_server
from .pages import CHARGED_TWICE, assert_accessible, chat, confirm, say, session_of, turn_done
from .test_inspector import inspector


def _aside(coro: Any) -> Any:
    """Run a coroutine on a loop of its own thread (Playwright's loop holds this one)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def any_store_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    schema = None
    if request.param == "memory":
        url = "memory://"
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        _aside(require_pg())
        schema = f"handoffs_test_{uuid.uuid4().hex[:12]}"
        url = f"{PG_DSN}?schema={schema}"
    served = start_test_server("--store", url)
    try:
        yield served.url
    finally:
        served.stop()
        if schema is not None:
            _aside(drop_schema(schema))


def test_fork_from_here_opens_the_conversation_as_it_was_before_that_turn(
        context: Any, any_store_server: str, errors: list[str]) -> None:
    server = any_store_server
    user = chat(context, server, errors)
    say(user, "hello")
    turn_done(user, 1)
    say(user, CHARGED_TWICE)
    turn_done(user, 2)
    sid = session_of(user)[0]
    page = inspector(context, server, errors, sid)
    fork_button = page.locator("#timeline li.turn[data-turn='2'] > button.fork")
    fork_button.wait_for()
    assert fork_button.inner_text() == "Fork from here"
    assert page.locator("#timeline li.turn > button.fork").count() == 2
    assert_accessible(page, "the inspector's timeline with its fork controls")

    with context.expect_page() as opened:
        fork_button.click()
    tab = opened.value
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.wait_for_selector("#inspector", state="visible")
    tab.wait_for_selector("#state .forked-from")

    fork_id = tab.evaluate("window.handoffsInspector.open")
    assert fork_id.startswith(f"{sid}-fork-")
    assert tab.locator("#session-title").inner_text() == f"Session {fork_id}"
    assert tab.locator("#state .forked-from").inner_text() == f"{sid} before turn 2"
    summary = tab.locator("#summary").inner_text()
    assert "turns\n1" in summary
    # the fork holds turn 1 only: the greeting, not the double charge
    tab.wait_for_selector("#timeline li.turn[data-turn='1']")
    assert tab.locator("#timeline li.turn").count() == 1
    assert CHARGED_TWICE not in tab.locator("#calls").inner_text()
    assert page.locator("#fork-note a").first.inner_text() == fork_id
    assert_accessible(tab, "the inspector on a fork")
    tab.close()
    assert not errors


def test_a_fork_is_continued_in_the_chat_marked_as_a_fork_and_deleted(
        context: Any, server: str, errors: list[str]) -> None:
    user = chat(context, server, errors)
    say(user, "hello")
    turn_done(user, 1)
    say(user, CHARGED_TWICE)
    turn_done(user, 2)
    sid = session_of(user)[0]
    page = inspector(context, server, errors, sid)
    button = page.locator("#timeline li.turn[data-turn='2'] > button.fork")
    with context.expect_page() as opened:
        button.click()
    opened.value.close()  # the fork in the inspector: the test above
    go_on = page.locator("#fork-note a", has_text="continue it in the chat")
    with context.expect_page() as chatted:
        go_on.click()
    tab = chatted.value
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.wait_for_selector("#connection[data-state=live]")
    turn_done(tab, 1)
    fork = session_of(tab)[0]
    assert fork.startswith(f"{sid}-fork-") and fork != sid
    assert "before turn 2" in tab.locator("#fork-banner").inner_text()
    assert tab.locator(".msg.user").count() == 1  # turn 1 only
    assert "fork" in tab.locator(f"#conversations li[data-session='{fork}']"
                                 ).inner_text().lower()
    say(tab, CHARGED_TWICE)
    turn_done(tab, 2)
    assert tab.locator(".msg.agent[data-agent=refunds]").count() == 1
    tab.locator(f"#conversations li[data-session='{fork}'] button.delete").click()
    confirm(tab)
    tab.wait_for_selector(f"#conversations li[data-session='{fork}']", state="detached")
    assert session_of(tab)[0] != fork
    assert not errors
