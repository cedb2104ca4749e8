"""The team as an OpenAI-compatible model, through the official `openai` client."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import openai

from .conftest import OPERATOR_KEY, Served, bearer, serving


def test_models_list_the_team_and_its_agents(served: Served) -> None:
    client = openai.OpenAI(base_url=served.url + "/v1", api_key="unused")
    ids = [m.id for m in client.models.list()]
    assert ids[0] == "team" and "team/billing" in ids
    assert "team/policy" not in ids and "team/operator" not in ids


def test_a_throwaway_completion_answers_with_the_final_agent(served: Served) -> None:
    client = openai.OpenAI(base_url=served.url + "/v1", api_key="unused")
    reply = client.chat.completions.create(model="team", messages=[
        {"role": "system", "content": "be nice"},
        {"role": "user", "content": "I was charged twice on my invoice"}])
    assert reply.choices[0].message.content
    assert not reply.choices[0].message.tool_calls
    extra = reply.model_extra["handoffs"]  # type: ignore[index]
    assert extra["agent"]["name"] == "billing" and extra["session_id"] is None
    assert [h["target"] for h in extra["handoffs"]] == ["billing"]


def test_a_session_continues_across_completions_with_its_token(served: Served) -> None:
    sid, token = served.session()
    client = openai.OpenAI(base_url=served.url + "/v1", api_key=token,
                           default_headers={"X-Handoffs-Session": sid})
    client.chat.completions.create(model="team", messages=[
        {"role": "user", "content": "I was charged twice"}])
    second = client.chat.completions.create(model="team", messages=[
        {"role": "user", "content": "and again"}])
    assert second.model_extra["handoffs"]["agent"]["name"] == "billing"  # type: ignore[index]
    session = served.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).json()
    assert session["turn"] == 2
    wrong = openai.OpenAI(base_url=served.url + "/v1", api_key="nope",
                          default_headers={"X-Handoffs-Session": sid})
    try:
        wrong.chat.completions.create(model="team", messages=[{"role": "user",
                                                               "content": "hi"}])
        raise AssertionError("a wrong token was accepted")
    except openai.PermissionDeniedError as exc:
        assert exc.body["code"] == "forbidden"  # type: ignore[index]


def test_picking_an_agent_through_the_model_name(served: Served) -> None:
    client = openai.OpenAI(base_url=served.url + "/v1", api_key="unused")
    reply = client.chat.completions.create(model="team/technical", messages=[
        {"role": "user", "content": "my dock disconnects"}])
    assert reply.model_extra["handoffs"]["agent"]["name"] == "technical"  # type: ignore[index]
    try:
        client.chat.completions.create(model="team/nobody", messages=[
            {"role": "user", "content": "hi"}])
        raise AssertionError("an unknown model was accepted")
    except openai.NotFoundError as exc:
        assert exc.body["code"] == "unknown_model"  # type: ignore[index]


def test_streaming_sync_and_async(served: Served) -> None:
    client = openai.OpenAI(base_url=served.url + "/v1", api_key="unused")
    stream = client.chat.completions.create(model="team", stream=True, messages=[
        {"role": "user", "content": "I was charged twice on my invoice"}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text
    assert chunks[-1].model_extra["handoffs"]["agent"]["name"] == "billing"  # type: ignore[index]
    assert any((c.model_extra or {}).get("handoffs_event", {}).get("type") == "agent_changed"
               for c in chunks)

    async def play() -> str:
        aclient = openai.AsyncOpenAI(base_url=served.url + "/v1", api_key="unused")
        reply = await aclient.chat.completions.create(model="team", messages=[
            {"role": "user", "content": "my dock keeps disconnecting"}])
        s = await aclient.chat.completions.create(model="team", stream=True, messages=[
            {"role": "user", "content": "hello"}])
        parts = [c.choices[0].delta.content or "" async for c in s if c.choices]
        await aclient.close()
        return (reply.choices[0].message.content or "") + "|" + "".join(parts)

    both = asyncio.run(play())
    assert both.split("|")[0] and both.split("|")[1]


def _chat_sessions(served: Served) -> list[str]:
    listed = served.client.get("/v1/sessions", params={"limit": 500},
                               headers=bearer(OPERATOR_KEY)).json()["sessions"]
    return [s["id"] for s in listed if s["id"].startswith("chat_")]


def test_a_refused_agent_pick_stores_nothing(served: Served) -> None:
    client = openai.OpenAI(base_url=served.url + "/v1", api_key="unused")
    for model, code in [("team/policy", "not_user_selectable"),
                        ("team/operator", "not_user_selectable")]:
        try:
            client.chat.completions.create(model=model, messages=[
                {"role": "user", "content": "hi"}])
            raise AssertionError(f"{model} was accepted")
        except openai.PermissionDeniedError as exc:
            assert exc.body["code"] == code  # type: ignore[index]
    assert _chat_sessions(served) == []


def test_model_names_other_than_the_teams_are_refused(served: Served) -> None:
    client = openai.OpenAI(base_url=served.url + "/v1", api_key="unused")
    for model in ("gpt-4o", "handoffs", "handoffs-team"):
        try:
            client.chat.completions.create(model=model, messages=[
                {"role": "user", "content": "hi"}])
            raise AssertionError(f"{model} was accepted")
        except openai.NotFoundError as exc:
            assert exc.body["code"] == "unknown_model"  # type: ignore[index]


class _Slow:
    """The support team's rules, a second late."""

    def __init__(self) -> None:
        from handoffs.examples.support import rule_model

        self.inner = rule_model()

    async def complete(self, request: Any) -> Any:
        await asyncio.sleep(1.0)
        return await self.inner.complete(request)

    async def stream(self, request: Any) -> Any:
        await asyncio.sleep(1.0)
        async for part in self.inner.stream(request):
            yield part


def test_a_stream_whose_client_goes_away_leaves_no_session() -> None:
    from handoffs import Runner
    from handoffs.examples.support import build_team

    with serving(lambda: Runner(build_team(), model=_Slow())) as s:
        with s.client.stream("POST", "/v1/chat/completions", json={
                "model": "team", "stream": True,
                "messages": [{"role": "user", "content": "I was charged twice"}]}) as r:
            first = next(r.iter_lines())
            assert first.startswith("data: ")
            assert len(_chat_sessions(s)) == 1  # the turn runs on...
        # ...and its session goes once the turn ends, though nobody reads the answer.
        deadline = time.monotonic() + 15
        while _chat_sessions(s):
            assert time.monotonic() < deadline, "the throw-away session was left behind"
            time.sleep(0.1)


def test_a_throwaway_turn_that_waits_for_a_person_says_so_and_keeps_the_session(
        served: Served) -> None:
    client = openai.OpenAI(base_url=served.url + "/v1", api_key="unused")
    reply = client.chat.completions.create(model="team/technical", messages=[
        {"role": "user", "content": "Can a person look at my account?"}])
    content = reply.choices[0].message.content or ""
    extra = reply.model_extra["handoffs"]  # type: ignore[index]
    assert extra["status"] == "waiting_for_human"
    assert "Operator (human) will reply" in content
    sid, token = extra["session_id"], extra["token"]
    assert sid in content and token not in content
    assert served.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).json()["status"] \
        == "waiting_for_human"

    # The person answers; the client sees it with the answer to its next message.
    human = served.client.post(f"/v1/sessions/{sid}/human", headers=bearer(OPERATOR_KEY),
                               json={"text": "Hi, Sam here: I reset your dock's pairing."})
    assert human.status_code == 200
    session = openai.OpenAI(base_url=served.url + "/v1", api_key=token,
                            default_headers={"X-Handoffs-Session": sid})
    again = session.chat.completions.create(model="team", messages=[
        {"role": "user", "content": "Thanks, is it fixed?"}])
    text = again.choices[0].message.content or ""
    assert text.startswith("Hi, Sam here: I reset your dock's pairing.")
    assert "will reply" in text  # still the person's conversation


def test_a_throwaway_turn_that_waits_for_approval_can_be_approved() -> None:
    from web.team import make_runner

    with serving(lambda: make_runner(traced=False)) as s:
        client = openai.OpenAI(base_url=s.url + "/v1", api_key="unused")
        reply = client.chat.completions.create(model="team/cashier", messages=[
            {"role": "user", "content": "A voucher, please"}])
        content = reply.choices[0].message.content or ""
        extra = reply.model_extra["handoffs"]  # type: ignore[index]
        assert extra["status"] == "waiting_for_approval"
        assert "approve issue_voucher" in content
        sid = extra["session_id"]
        waiting = s.client.get(f"/v1/sessions/{sid}/approvals",
                               headers=bearer(OPERATOR_KEY)).json()["approvals"]
        decided = s.client.post(f"/v1/sessions/{sid}/approvals/{waiting[0]['call_id']}",
                                headers=bearer(OPERATOR_KEY), json={"approved": True})
        assert decided.json()["output"] == "Done: voucher of 20 EUR sent."
