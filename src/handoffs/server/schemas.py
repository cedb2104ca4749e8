"""The shapes of request bodies (pydantic at the edge, as the OpenAPI document shows)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class NewSession(BaseModel):
    """`POST /v1/sessions`. Everything is optional."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(None, min_length=1, max_length=256,
                           description="A session id of the client's choosing "
                           "(operator key only: channels that own their ids).")
    channel: str | None = Field(None, max_length=256, description="e.g. web, sms, voice")
    agent: str | None = Field(None, max_length=256,
                              description="Start with this agent (as if the user picked it).")
    context: dict[str, Any] | None = Field(
        None, description="The team's typed session context to start from "
        "(`Team(context_type=...)`; operator key only, since a customer must not choose "
        "what the server keeps about it).")


class NewMessage(BaseModel):
    """`POST /v1/sessions/{id}/messages`: the user's message."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="What the user says.")
    channel: str | None = Field(None, max_length=256)
    context: dict[str, Any] | None = Field(
        None, description="Given to the agents' tools and instructions as `ctx.context` "
        "(a team with a typed context keeps its own: there, operator key only, and only "
        "for a session without one).")


class AgentPick(BaseModel):
    """`POST /v1/sessions/{id}/agent`: the user picks who answers next."""

    model_config = ConfigDict(extra="forbid")
    agent: str = Field(min_length=1, max_length=256)


class HumanReply(BaseModel):
    """`POST /v1/sessions/{id}/human`: the human operator speaks (and may hand back)."""

    model_config = ConfigDict(extra="forbid")
    text: str
    handoff_to: str | None = Field(None, max_length=256)


class ApprovalDecision(BaseModel):
    """A person's decision on a tool call that waits (`runner.approve` / `reject`)."""

    model_config = ConfigDict(extra="forbid")
    approved: bool = Field(description="True runs the call; false gives the model `reason`.")
    reason: str = Field("", max_length=2000, description="Why it was rejected.")


class SessionExport(BaseModel):
    """`POST /v1/sessions/import`: an export, as `GET /v1/sessions/{id}/export` gave it."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1, max_length=256)
