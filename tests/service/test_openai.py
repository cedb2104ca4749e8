"""The team as an OpenAI-compatible model, through the official `openai` client."""

from __future__ import annotations

import asyncio

import openai

from .conftest import Served, bearer


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
