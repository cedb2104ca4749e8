"""Any neutral view renders into a history each provider accepts.

The checks are the fake servers' own request rules, so a history that passes here is one
the wire tests' servers (and the real APIs they imitate) would accept.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from handoffs import AssistantMessage, Note, ToolCall, ToolResult, UserMessage
from handoffs.core.messages import Message
from handoffs.models.anthropic import anthropic_messages
from handoffs.models.openai import chat_messages
from handoffs.models.replay import CONTINUE, NO_RESULT
from wire.anthropic_api import check_messages_request
from wire.openai_api import check_chat_request

IDS = ["call_1", "call_1", "toolu_01A", "call.weird:id", "x" * 60, "", "fc_" + "9" * 50]


def openai_ok(messages: list[Message], system: str = "sys") -> list[dict[str, object]]:
    rendered = chat_messages(system, messages)
    assert check_chat_request({"model": "m", "messages": rendered}) is None
    return rendered


def anthropic_ok(messages: list[Message]) -> list[dict[str, object]]:
    rendered = anthropic_messages(messages)
    problem = check_messages_request({"model": "m", "max_tokens": 10, "messages": rendered})
    assert problem is None, problem
    return rendered


def test_empty_view_gets_one_user_turn() -> None:
    assert openai_ok([], system="") == [{"role": "user", "content": CONTINUE}]
    assert anthropic_ok([]) == [{"role": "user", "content": [{"type": "text",
                                                                "text": CONTINUE}]}]


def test_view_starting_with_a_tool_result_turns_it_into_user_text() -> None:
    view: list[Message] = [ToolResult("call_9", "lookup", "42", "a"), UserMessage("hi", "a")]
    rendered = openai_ok(view)
    assert rendered[1] == {"role": "user", "content": "[result of an earlier lookup call] 42"}
    blocks = anthropic_ok(view)[0]["content"]
    assert [b["type"] for b in blocks] == ["text", "text"]  # type: ignore[index]


def test_call_without_result_gets_a_synthetic_error_result() -> None:
    view: list[Message] = [UserMessage("hi", "a"),
                           AssistantMessage("", "a", (ToolCall("call_1", "f", "{}"),)),
                           UserMessage("again", "a")]
    assert openai_ok(view)[3] == {"role": "tool", "tool_call_id": "call_1",
                                  "content": NO_RESULT}
    result = anthropic_ok(view)[2]["content"][0]  # type: ignore[index]
    assert result["is_error"] is True and result["content"] == NO_RESULT


def test_consecutive_user_items_merge_into_one_anthropic_turn() -> None:
    view: list[Message] = [UserMessage("hi", "a"), Note("Your last response was empty.", "a",
                                                        to_model=True),
                           Note("for logs only", "a")]
    turns = anthropic_ok(view)
    assert len(turns) == 1 and len(turns[0]["content"]) == 2  # type: ignore[arg-type]
    assert "for logs only" not in str(openai_ok(view))


def test_view_ending_with_another_agents_text_ends_with_a_user_turn_for_anthropic() -> None:
    turns = anthropic_ok([UserMessage("hi", "a"), AssistantMessage("Over to billing.", "a")])
    assert turns[-1] == {"role": "user", "content": [{"type": "text", "text": CONTINUE}]}


def test_transferred_handoff_calls_are_never_replayed() -> None:
    view: list[Message] = [
        UserMessage("hi", "a"),
        AssistantMessage("Moving you.", "a", (
            ToolCall("call_h", "transfer_to_b", "{}", handoff="transferred"),)),
        ToolResult("call_h", "transfer_to_b", "Transferred to b.", "a",
                   handoff="transferred"),
    ]
    assert "call_h" not in str(openai_ok(view)) and "call_h" not in str(anthropic_ok(view))


def test_ids_are_made_safe_short_and_unique_the_same_way_every_time() -> None:
    view: list[Message] = [UserMessage("hi", "a")]
    for i, cid in enumerate(IDS):
        view += [AssistantMessage("", "a", (ToolCall(cid, "multi_tool_use.parallel", "{}"),)),
                 ToolResult(cid, "f", f"r{i}", "a")]
    rendered = openai_ok(view)
    ids = [m["tool_call_id"] for m in rendered if m["role"] == "tool"]
    assert len(set(ids)) == len(IDS) and all(len(i) <= 40 for i in ids)  # type: ignore[arg-type]
    assert ids[0] == "call_1" and ids[2] == "toolu_01A"
    assert rendered == openai_ok(view)
    anthropic_ok(view)


messages = st.one_of(
    st.builds(UserMessage, st.sampled_from(["hi", "", "  ", "more"]), st.just("a")),
    st.builds(Note, st.sampled_from(["feedback", ""]), st.just("a"), st.booleans()),
    st.builds(AssistantMessage, st.sampled_from(["", "ok", " "]), st.sampled_from(["a", "b"]),
              st.lists(st.builds(ToolCall, st.sampled_from(IDS),
                                 st.sampled_from(["f", "transfer_to_b", "bad.name"]),
                                 st.sampled_from(["{}", '{"x": 1}', "{bad", ""]),
                                 st.sampled_from([None, "transferred", "rejected",
                                                  "delegated"])),
                       max_size=3).map(tuple)),
    st.builds(ToolResult, st.sampled_from(IDS), st.just("f"), st.sampled_from(["r", ""]),
              st.just("a"), st.booleans(), st.sampled_from([None, "transferred"])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(messages, max_size=12), st.sampled_from(["", "system text"]))
def test_any_view_renders_into_a_valid_history_for_both_providers(
        view: list[Message], system: str) -> None:
    openai_ok(view, system)
    anthropic_ok(view)
