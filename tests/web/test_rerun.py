"""The developer's loop (issue 43, item 11): in the inspector, edit a recorded model call
(its system text, history window, tools, model), make it again on another model (the
official OpenAI SDK against a local stub), see both answers side by side with their
calls, fork from there with the new answer, and go on in the chat, where the fork is
marked as a fork and can be deleted (item 6)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from wire.openai_api import OpenAIWire, completion
from wire.server import FakeServer

from .conftest import start_test_server
from .pages import (
    CHARGED_TWICE,
    assert_accessible,
    chat,
    confirm,
    in_view,
    operator,
    say,
    seen,
    session_of,
    turn_done,
)
from .test_inspector_layout import signed_in

ANSWER = "I can refund that myself: no transfer needed. Which card did you pay with?"


@pytest.fixture
def stub() -> Iterator[FakeServer]:
    server = FakeServer(OpenAIWire()).start()
    yield server
    server.stop()


@pytest.fixture
def served_with_stub(stub: FakeServer) -> Iterator[str]:
    """A server whose `openai:` models are the stub (OPENAI_BASE_URL)."""
    served = start_test_server("--store", "memory://", env={
        "OPENAI_BASE_URL": stub.url + "/v1", "OPENAI_API_KEY": "sk-test"})
    yield served.url
    served.stop()


def test_edit_and_rerun_a_call_then_fork_with_its_answer_and_go_on_in_the_chat(
        context: Any, sized: Any, size: str, served_with_stub: str, stub: FakeServer,
        errors: list[str]) -> None:
    server = served_with_stub
    user = chat(context, server, errors)
    say(user, CHARGED_TWICE)
    turn_done(user, 1)
    sid = session_of(user)[0]
    before = operator(server, "GET", f"/v1/sessions/{sid}/transcript")

    page = signed_in(sized, server, errors, sid)
    call = page.locator("#calls .call[data-agent=triage]").first
    call.locator(".outcome:not(.muted)").first.wait_for()
    call.locator("summary").first.click()
    call.locator("button.edit-rerun").click()
    form = call.locator("form.rerun")
    form.locator("textarea").fill("You are a terse assistant. Never transfer refunds.")
    form.locator("input[type=number]").fill("1")
    for box in form.locator("input[type=checkbox]").all():
        if box.get_attribute("value") != "transfer_to_technical":
            box.uncheck()
    form.locator("input[type=text]").fill("openai:gpt-4.1-mini")
    stub.add(completion(ANSWER))
    form.locator("button.rerun-go").click()
    again = call.locator(".compare .side.again")
    again.locator("pre.text").wait_for()

    # Both answers, side by side (stacked on a phone), each with its calls.
    assert again.locator("pre.text").inner_text() == ANSWER
    assert "openai:gpt-4.1-mini" in again.locator("h5").inner_text()
    recorded = call.locator(".compare .side.recorded")
    assert "transfer_to_billing(" in recorded.inner_text()
    left, right = recorded.bounding_box(), again.bounding_box()
    if size == "phone":
        assert right["y"] >= left["y"] + left["height"] - 1
    else:
        assert abs(left["y"] - right["y"]) < 2 and left["x"] + left["width"] <= right["x"]
    again.scroll_into_view_if_needed()
    assert in_view(page, ".compare .side.again pre.text"), seen(page, ".side.again pre.text")
    sent = stub.bodies[-1]
    assert sent["model"] == "gpt-4.1-mini"
    assert sent["messages"][0]["content"] == "You are a terse assistant. Never transfer refunds."
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert [t["function"]["name"] for t in sent["tools"]] == ["transfer_to_technical"]
    assert call.locator(".side.recorded button.fork-with").is_disabled()  # it calls tools
    assert_accessible(page, f"edit and rerun, side by side ({size})")
    assert operator(server, "GET", f"/v1/sessions/{sid}/transcript") == before

    with sized.expect_page() as opened:
        again.locator("button.fork-with").click()
    tab = opened.value
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.wait_for_selector("#connection[data-state=live]")
    tab.locator(".msg.agent[data-agent=triage]").wait_for()
    fork = session_of(tab)[0]
    assert fork.startswith(f"{sid}-fork-")
    banner = tab.locator("#fork-banner")
    assert banner.is_visible() and sid in banner.inner_text()
    assert "at model call" in banner.inner_text() and "fork" in banner.inner_text().lower()
    assert tab.locator(".msg.user").inner_text().endswith(CHARGED_TWICE)
    assert tab.locator(".msg.agent[data-agent=triage]").inner_text().endswith(ANSWER)
    mine = tab.locator(f"#conversations li[data-session='{fork}']")
    assert "fork" in mine.inner_text().lower() and mine.get_attribute("class") == "current"
    assert_accessible(tab, f"a fork continued in the chat ({size})")
    # It goes on as any conversation, and the original is untouched.
    say(tab, "Visa, the one ending 4242.")
    turn_done(tab, 2)
    assert operator(server, "GET", f"/v1/sessions/{sid}/transcript") == before
    assert fork not in [s["id"] for s in operator(server, "GET", "/v1/queue")["sessions"]]
    # And it can be deleted: gone from the list and from the server.
    mine.locator("button.delete").click()
    confirm(tab)
    tab.wait_for_selector(f"#conversations li[data-session='{fork}']", state="detached")
    assert fork not in [s["id"] for s in operator(server, "GET", "/v1/sessions?limit=500")[
        "sessions"]]
    assert not errors
