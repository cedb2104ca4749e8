"""What a run returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ...core.events import Event
from ...core.guardrails import GuardrailCheck
from ...core.handoff import HandoffRecord
from ...errors import RunFailed
from ...models.base import Usage


class RunStatus(StrEnum):
    """How a turn ended."""

    COMPLETED = "completed"
    """An agent answered the user."""
    HANDED_OFF = "handed_off"
    """A next-turn handoff ended the turn; the target answers the next message."""
    WAITING_FOR_HUMAN = "waiting_for_human"
    """A human agent holds the conversation; `runner.reply_as_human` answers."""
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    """A tool call waits for a person's decision (`runner.approve` / `runner.reject`)."""
    FAILED = "failed"
    """The turn could not finish; `error` says why. The user's message is kept."""


@dataclass(slots=True, frozen=True)
class RunError:
    """Why a run failed: a stable code, a sentence, and the agent that was running."""

    code: str
    """Stable and machine-readable: `max_steps`, `model_error`, `handoff_hook_failed`, ..."""
    message: str
    """What went wrong and what to do, in a sentence."""
    agent: str | None = None
    """The agent that was running when the turn failed."""
    exception: BaseException | None = field(default=None, compare=False, repr=False)
    """The exception behind the failure, with its traceback (None when the failure was
    not an exception, e.g. `max_steps`). Not part of `to_dict()`; `raise_for_status()`
    chains it as the `__cause__` of the `RunFailed` it raises."""

    def to_dict(self) -> dict[str, Any]:
        """`code`, `message` and `agent` as JSON-ready data (the exception is left out)."""
        return {"code": self.code, "message": self.message, "agent": self.agent}


@dataclass(slots=True)
class RunResult:
    """The outcome of one user turn (or one plan)."""

    session_id: str
    """The session the turn ran on."""
    output: str
    """The text the user should see."""
    agent: str
    """The name of the agent that produced the output (or holds the conversation)."""
    status: RunStatus
    """How the turn ended: completed, handed off to the next turn, waiting for a human,
    or failed (see `error`)."""
    turn: int = 0
    """The session's turn number (1 for the first user message)."""
    handoffs: list[HandoffRecord] = field(default_factory=list)
    """Every handoff request of this turn, accepted and rejected."""
    error: RunError | None = None
    """Why the turn failed (a stable code, a sentence, the exception); None otherwise."""
    usage: Usage = field(default_factory=Usage)
    """Tokens over the whole turn."""
    usage_by_agent: dict[str, Usage] = field(default_factory=dict)
    """Tokens per agent name."""
    steps: dict[str, str] = field(default_factory=dict)
    """For `run_plan`: each step's answer by step name."""
    output_data: Any = None
    """The validated object when the answering agent has an `output_type` (`output` is
    its JSON); None otherwise."""
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    """Tokens per model name (the provider's own, e.g. `gpt-4.1-mini-2025-04-14`, else
    the adapter's): what a price table prices."""
    guardrails: Sequence[GuardrailCheck] = ()
    """Every guardrail verdict of the turn, passed and tripped, in order (the turn's
    `guardrail_checked` events)."""
    _events: Any = field(default=None, repr=False, compare=False)

    @property
    def refused(self) -> GuardrailCheck | None:
        """The guardrail trip whose reply is the output (the turn completed with a
        refusal), else None."""
        for c in self.guardrails:
            if not c.passed and c.reply is not None and c.reply == self.output:
                return c
        return None

    @property
    def events(self) -> list[Event]:
        """Every event of the turn, in order (the same a `stream` yields)."""
        source = self._events
        if source is None:
            return []
        if isinstance(source, list):
            return source
        events: list[Event] = source.events
        self._events = events
        return events

    def bind_events(self, source: Any) -> None:
        """Attach the turn's events; they are materialised on first access."""
        self._events = source

    @property
    def ok(self) -> bool:
        """True unless the turn failed."""
        return self.status is not RunStatus.FAILED

    def raise_for_status(self) -> RunResult:
        """Raise `RunFailed` (with the error's code) if the run failed; else return self."""
        if self.status is RunStatus.FAILED:
            err = self.error or RunError("error", "The run failed.")
            raise RunFailed(f"Run failed ({err.code}): {err.message}",
                            code=err.code) from err.exception
        return self

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data: what a `run_completed` / `run_failed` event and
        the HTTP API carry as `result` (`output_data` as its JSON; events left out)."""
        return {
            "session_id": self.session_id, "output": self.output, "agent": self.agent,
            "status": self.status.value, "turn": self.turn,
            "handoffs": [r.to_dict() for r in self.handoffs],
            "error": self.error.to_dict() if self.error else None,
            "usage": self.usage.to_dict(),
            "usage_by_agent": {k: v.to_dict() for k, v in self.usage_by_agent.items()},
            "usage_by_model": {k: v.to_dict() for k, v in self.usage_by_model.items()},
            "steps": dict(self.steps),
            "output_data": (None if self.output_data is None
                            else self.output_data.model_dump(mode="json")),
        } | ({"guardrails": [c.to_dict() for c in self.guardrails]}
             if self.guardrails else {})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], output_type: Any = None) -> RunResult:
        """A result from `to_dict()`'s data (a stored terminal event's `result`), as a
        retry with the same idempotency key gets it. `output_type`: the answering
        agent's, to read `output_data` back as that object (else its JSON stays)."""
        err = d.get("error")
        data = d.get("output_data")
        if data is not None and output_type is not None:
            data = output_type.model_validate(data)
        return cls(
            d["session_id"], d.get("output", ""), d.get("agent", ""),
            RunStatus(d["status"]), d.get("turn", 0),
            [HandoffRecord.from_dict(r) for r in d.get("handoffs", ())],
            None if err is None else RunError(err["code"], err["message"], err.get("agent")),
            Usage.from_dict(d.get("usage", {})),
            {k: Usage.from_dict(v) for k, v in d.get("usage_by_agent", {}).items()},
            dict(d.get("steps", {})), data,
            {k: Usage.from_dict(v) for k, v in d.get("usage_by_model", {}).items()},
            [GuardrailCheck.from_dict(c) for c in d.get("guardrails", ())])
