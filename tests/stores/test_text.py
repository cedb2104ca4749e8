"""Text that UTF-8 cannot carry is made valid at the store boundary, alike on every store.

A lone UTF-16 surrogate ("\\ud800", from a bad decode or a model's broken escape) becomes
U+FFFD; a surrogate pair written as two code points becomes the character it encodes.
NUL ("\\x00") round-trips in every JSON value, and becomes U+FFFD only in the plain
columns a listing reads (PostgreSQL text cannot hold it).
"""

from __future__ import annotations

import json

from handoffs import RunContext, Runner, tool
from handoffs.core.messages import UserMessage
from handoffs.core.session import SessionState
from handoffs.testing import ScriptedModel, raw_call, reply, transfer

from .conftest import Backend, support_team

BAD = "a\ud800b"
FIXED = "a\ufffdb"


async def test_lone_surrogates_anywhere_are_stored_as_replacement_characters(
    backend: Backend,
) -> None:
    @tool
    def remember(ctx: RunContext, note: str) -> str:
        """Remember a note."""
        ctx.shared["note"] = note
        ctx.shared[BAD] = [BAD]
        return f"kept {note}"

    store = backend.open()
    raw = '{"note": "' + BAD + '"}'  # a raw surrogate in the argument text
    model = ScriptedModel([raw_call("remember", raw), transfer("billing", reason=BAD),
                           reply(BAD)])
    await Runner(support_team(tools=[remember]), model=model, store=store).run(
        "s1", BAD, channel=BAD)

    for reader in (store, backend.open()):
        state = await reader.load("s1")
        assert state is not None
        texts = json.dumps(state.to_dict(), ensure_ascii=False)
        assert state.messages[0].text == FIXED
        assert state.messages[-1].text == FIXED
        assert state.shared["note"] == FIXED and state.shared[FIXED] == [FIXED]
        assert state.handoffs[0].explanation == FIXED
        assert state.channel == FIXED
        calls = [c for m in state.messages for c in getattr(m, "tool_calls", ())]
        assert calls[0].arguments == '{"note": "' + FIXED + '"}'
        texts.encode("utf-8")  # everything is valid UTF-8 now
        exported = await reader.export_session("s1")
        assert exported is not None
        json.dumps(exported, ensure_ascii=False).encode("utf-8")
        listed = await reader.list_sessions()
        assert [s.id for s in listed] == ["s1"]


async def test_a_surrogate_pair_written_as_two_code_points_is_one_character(
    backend: Backend,
) -> None:
    store = backend.open()
    state = SessionState("s1", active_agent="triage")
    since = state.checkpoint()
    state.messages.append(UserMessage("smile \ud83d\ude00 end \udc00", "triage"))
    state.shared["k"] = "\ud83d\ude00"
    await store.commit(state, since)

    for reader in (store, backend.open()):
        loaded = await reader.load("s1")
        assert loaded is not None
        assert loaded.messages[0].text == "smile \U0001f600 end \ufffd"
        assert loaded.shared["k"] == "\U0001f600"


async def test_an_import_with_bad_text_is_stored_valid(backend: Backend) -> None:
    store = backend.open()
    state = SessionState("s1", active_agent="triage", metadata={"label": BAD})
    state.messages.append(UserMessage(BAD, "triage"))

    imported = await store.import_session(state.to_dict())

    assert imported.messages[0].text == FIXED and imported.metadata["label"] == FIXED
    again = await backend.open().load("s1")
    assert again is not None and again.to_dict() == imported.to_dict()


async def test_nul_characters_round_trip_in_values_and_are_replaced_in_listings(
    backend: Backend,
) -> None:
    @tool
    def remember(ctx: RunContext, note: str) -> str:
        """Remember a note."""
        ctx.shared["note"] = note
        return "ok"

    text = "line\x00end"
    store = backend.open()
    model = ScriptedModel([raw_call("remember", json.dumps({"note": text})), reply(text)])
    await Runner(support_team(tools=[remember]), model=model, store=store).run(
        "s1", text, channel="web\x00chat")

    for reader in (store, backend.open()):
        state = await reader.load("s1")
        assert state is not None
        assert state.messages[0].text == text and state.messages[-1].text == text
        assert state.shared["note"] == text
        assert state.channel == "web\x00chat"
        listed = await reader.list_sessions()
        assert [(s.id, s.status) for s in listed] == [("s1", "idle")]

    odd = SessionState("s2", active_agent="tri\x00age")
    await store.commit(odd, odd.checkpoint())
    for reader in (store, backend.open()):
        loaded = await reader.load("s2")
        assert loaded is not None and loaded.active_agent == "tri\x00age"
        listed = await reader.list_sessions()
        assert (listed[0].id, listed[0].active_agent) == ("s2", "tri\ufffdage")


def test_the_text_check_finds_a_lone_surrogate_in_any_part_of_a_json_value() -> None:
    from handoffs.core.handoff import HandoffReason as Kind
    from handoffs.stores.text import json_encodable

    assert json_encodable({"k": "v", "kind": Kind.LLM, "none": None, "n": 0, "e": {}})
    assert json_encodable({"k": "v", "n": 3, "f": 1.5, "l": ["x", "ü"]})
    for bad in ({"k": BAD}, {BAD: "v"}, {"k": "v", "n": 3, "deep": {"x": [BAD]}},
                {"k": [1, {"y": BAD}]}, [BAD], {"kind": Kind.LLM, "why": BAD}):
        assert not json_encodable(bad), bad


def test_the_commit_check_finds_a_lone_surrogate_in_any_field_of_any_object() -> None:
    from handoffs.core.handoff import HandoffReason, HandoffRecord
    from handoffs.core.messages import AssistantMessage, ToolCall, ToolResult
    from handoffs.stores.text import objects_encodable

    def record(**kw: object) -> HandoffRecord:
        return HandoffRecord("r1", "a", "b", HandoffReason.LLM, **kw)  # type: ignore[arg-type]

    fine = [UserMessage("hé", "a"), ToolResult("c1", "lookup", "ok", "a"),
            AssistantMessage("", "a", (ToolCall("c1", "lookup", '{"q": "ü"}'),)),
            record(payload={"k": ["v", 1, None]}, extra={"line": "x"})]
    assert objects_encodable(fine)
    for bad in (UserMessage(BAD, "a"), ToolResult("c1", "lookup", BAD, "a"),
                AssistantMessage("", "a", (ToolCall("c1", "lookup", "{}"),
                                           ToolCall("c2", BAD, "{}"))),
                record(explanation=BAD), record(payload={"k": [1, {"deep": BAD}]}),
                record(extra={"ignored_arguments": ["x", BAD]}), record(summary=BAD)):
        assert not objects_encodable([*fine, bad]), bad
