"""Handoffs: declared routes between agents, and the records of their use.

A `Handoff` is a route one agent declares to another; it is offered to the model as a
tool (`transfer_to_<target>` by default). A `HandoffRecord` is what happened when a
route was asked for: who, to whom, why, with what payload, accepted or not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from ..errors import HandoffsError
from .context import HandoffContext, RunContext
from .messages import Message, Note
from .names import Named, tool_name
from .usage import Usage

if TYPE_CHECKING:
    import pydantic


HistoryFilter = Callable[[Sequence[Message]], Sequence[Message]]
HistoryMode = (Literal["own_tools", "full", "conversation", "last_user", "none", "summary"]
               | HistoryFilter)
EnabledFlag = bool | Callable[[RunContext], bool]

HISTORY_MODES = ("own_tools", "full", "conversation", "last_user", "none", "summary")
"""The history views by name (`Handoff(history=...)`, `Runner(history=...)`); the first
is the default."""


class HandoffReason(StrEnum):
    """Why control moved. Stored on every record; stable strings."""

    LLM = "llm"
    """The model called the handoff tool."""
    PROGRAMMATIC = "programmatic"
    """A tool or code returned `HandoffTo`."""
    USER_REQUEST = "user_request"
    """The user picked an agent (`runner.select_agent`)."""
    ERROR_RECOVERY = "error_recovery"
    """An agent failed and the team's fallback took over."""
    PLAN_STEP = "plan_step"
    """A supervisor's plan assigned the step."""
    ESCALATION = "escalation"
    """Handed to a human agent."""
    CAPABILITY_MATCH = "capability_match"
    CLARIFICATION = "clarification"


@dataclass(slots=True, frozen=True)
class Handoff:
    """A route from the agent that declares it to `target`, offered to the model as a tool."""

    target: str | Named
    """The agent to hand to, by name or by the `Agent` itself (anything with a `name`)."""
    description: str | None = None
    """The tool description shown to the model. None: built from the target's description."""
    tool_name: str | None = None
    """None: `transfer_to_<target>` for a one-way route (see `default_tool_name`),
    `ask_<target>` for a delegation (`default_ask_name`). A name given here must
    already be valid for every provider (`^[a-zA-Z0-9_-]{1,64}$`); `Team` refuses it
    otherwise."""
    history: HistoryMode | None = None
    """What the target's model sees of the conversation so far: `own_tools` (user and
    assistant text, plus the target's own earlier tool calls and results, not other
    agents'), `full` (every message, every agent's tool traffic included), `conversation`
    (user and assistant text only), `last_user` (only the latest user message), `none`
    (only the handoff note), `summary` (a summary made once at handoff time), or a
    callable over the transcript. Messages produced after the handoff are always shown in
    full. None (default): the runner's default (`Runner(history=...)`), which is
    `own_tools` unless the runner sets one (`history="full"` for a target that needs the
    tool results other agents got)."""
    transfer_system_message: bool = False
    """True: the source's instructions are added to the target's system text."""
    payload: type[pydantic.BaseModel] | None = None
    """A pydantic model for structured data the caller must pass with the handoff. Its
    fields become the tool's own arguments beside `reason` (as an ordinary tool's would);
    a payload with a field named `reason`, `task` or `payload` is one `payload` argument
    instead. A call that nests the fields under `payload` is accepted either way."""
    returns: bool = False
    """False: one-way transfer, the target takes over. True: delegation, the target's
    answer comes back to the caller as the call's result and the caller continues."""
    respond: Literal["same_turn", "next_turn"] = "same_turn"
    """`same_turn`: the target answers now (warm). `next_turn`: the turn ends after the
    transfer and the target answers the user's next message (cold)."""
    enabled: EnabledFlag = True
    """False, or a callable returning False, hides the route from the model and rejects it."""
    on_handoff: Callable[[RunContext, Any], Any] | Callable[[RunContext], Any] | None = None
    """Called (sync or async) when the handoff is accepted: `hook(ctx, payload)`, or
    `hook(ctx)` for a hook that takes no payload. A callable that cannot be called either
    way is refused here, when the route is declared (`invalid_team`)."""
    requires: tuple[str, ...] | str | None = None
    """Capabilities the target must have for the route to be usable."""
    timeout: float | None = None
    """Seconds a delegation (`returns=True`) may take; None means no limit of its own."""
    summarizer: Any = None
    """For `history="summary"`: a `Summarizer` (model and prompt); None uses the team's."""
    examples: Sequence[str] = ()
    """User messages this route is for ("the dock keeps disconnecting my monitor"): shown
    compactly in the route's tool description and in the agent's routing choice
    (`Agent(routing="choice")`), the cheapest way to teach a model a boundary."""
    counter_examples: Sequence[str] = ()
    """User messages this route is NOT for, shown the same way ("Not for: ...")."""
    check_input: bool = False
    """True: a one-way transfer along this route runs the target's input guardrails on
    the user's message again (beside the target's first model call). False: the message
    was checked by the agent that received it, once; the target's input guardrails apply
    when a user message reaches it directly. A delegation always checks its own task."""
    hook_takes_payload: bool = field(default=True, init=False, repr=False, compare=False)
    """Whether `on_handoff` is called `(ctx, payload)` (True) or `(ctx)`: read off its
    signature when the route is declared."""

    def __post_init__(self) -> None:
        h = self.history
        if h is not None and not callable(h) and h not in HISTORY_MODES:
            raise HandoffsError(
                f"Handoff history must be one of {', '.join(HISTORY_MODES)} or a callable "
                f"over the transcript, not {h!r}.",
                code="invalid_team",
            )
        if self.respond not in ("same_turn", "next_turn"):
            raise HandoffsError(
                f"Handoff respond must be 'same_turn' or 'next_turn', not {self.respond!r}.",
                code="invalid_team",
            )
        if self.payload is not None and not _is_model_class(self.payload):
            raise HandoffsError(
                f"Handoff payload must be a pydantic model class, not {self.payload!r}.",
                code="invalid_team",
            )
        for attr in ("examples", "counter_examples"):
            value = getattr(self, attr)
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise HandoffsError(f"Handoff {attr} must be a sequence of texts, not "
                                    f"{value!r}.", code="invalid_team")
            if not isinstance(value, tuple):
                object.__setattr__(self, attr, tuple(value))
        if self.on_handoff is not None:
            object.__setattr__(self, "hook_takes_payload", hook_takes_payload(self.on_handoff))
        if self.returns and self.respond == "next_turn":
            raise HandoffsError(
                "A delegation (returns=True) answers within the turn; it cannot use "
                "respond='next_turn'.",
                code="invalid_team",
            )

    @property
    def target_name(self) -> str:
        """The target agent's name, whether `target` was a name or an `Agent`."""
        t = self.target
        return t if isinstance(t, str) else t.name

    @property
    def required_capabilities(self) -> frozenset[str]:
        """`requires` as a set: the capabilities the target must have (empty: none)."""
        r = self.requires
        if r is None:
            return frozenset()
        return frozenset((r,)) if isinstance(r, str) else frozenset(r)

    @staticmethod
    def default_tool_name(target: str) -> str:
        """`transfer_to_<target>` (lower-cased), made valid for every provider by
        `core.names.tool_name`: `Café` gives `transfer_to_cafe`, `客服` gives
        `transfer_to_<8 hex>`, a long name is cut to 64 characters with a hash."""
        return tool_name(f"transfer_to_{target.lower()}")

    @staticmethod
    def default_ask_name(target: str) -> str:
        """`ask_<target>` (lower-cased, made valid like `default_tool_name`): the default
        tool of a delegation (`returns=True`), which asks and gets the answer back."""
        return tool_name(f"ask_{target.lower()}")


@dataclass(slots=True)
class HandoffRecord:
    """What happened when a handoff was asked for. Persisted with the session."""

    id: str
    """Unique within the session; events (`record_id`) and views refer to it."""
    source: str
    """The agent that asked (or the agent that was active, for a user's pick)."""
    target: str
    """The agent asked for (as named, even when unknown: the record says why it failed)."""
    reason: HandoffReason
    """How the handoff came about: `llm`, `programmatic`, `user_request`, ..."""
    explanation: str = ""
    """The requester's reason text (the model's `reason` argument)."""
    payload: Any = None
    """The payload as JSON-ready data (a dict), or None."""
    accepted: bool = True
    rejection: str | None = None
    """The stable rejection code, or None when accepted."""
    message: str = ""
    """For rejections: the sentence given back to the requester."""
    at: float = 0.0
    """Unix time when the request was decided."""
    turn: int = 0
    """The session's user turn the handoff belongs to (the loop rule counts per turn)."""
    tool_name: str | None = None
    """The tool the model called (`transfer_to_billing`); None when no tool was called."""
    call_id: str | None = None
    """The id of that tool call, to match it with its result in the transcript."""
    returns: bool = False
    """True for a delegation whose answer came back to the source."""
    summary: str | None = None
    """For `history="summary"` handoffs: the summary the target was given."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Kind-specific data: the error of an error recovery, the step and task of a plan,
    a delegation's `task` and `answer`, the delegation `line` a transfer was made on."""
    usage: Usage | None = None
    """The tokens the source agent spent in this turn, on its line, from when it got the
    work (the turn's start, or the handoff that brought it) up to and including the
    response that asked for this handoff (for an error recovery: up to its failure).
    None when no model of this turn's asked (a user's pick, an operator's hand-back, a
    record from before this field)."""

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (the payload as JSON data; `from_dict` reads it
        back)."""
        d: dict[str, Any] = {
            "id": self.id, "source": self.source, "target": self.target,
            "reason": self.reason.value, "explanation": self.explanation,
            "payload": self.payload, "accepted": self.accepted, "rejection": self.rejection,
            "message": self.message, "at": self.at, "turn": self.turn,
            "tool_name": self.tool_name, "call_id": self.call_id, "returns": self.returns,
        }
        if self.summary is not None:
            d["summary"] = self.summary
        if self.extra:
            d["extra"] = self.extra
        if self.usage is not None:
            d["usage"] = self.usage.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> HandoffRecord:
        """A record from `to_dict()`'s data."""
        return cls(
            id=d["id"], source=d["source"], target=d["target"],
            reason=HandoffReason(d["reason"]), explanation=d.get("explanation", ""),
            payload=d.get("payload"), accepted=d.get("accepted", True),
            rejection=d.get("rejection"), message=d.get("message", ""),
            at=d.get("at", 0.0), turn=d.get("turn", 0), tool_name=d.get("tool_name"),
            call_id=d.get("call_id"), returns=d.get("returns", False),
            summary=d.get("summary"), extra=dict(d.get("extra", {})),
            usage=Usage.from_dict(d["usage"]) if d.get("usage") else None,
        )


def payload_preview(payload: Any, limit: int = 200) -> str:
    """A bounded, single-line rendering of a payload for notes and logs."""
    if payload is None:
        return ""
    dump = getattr(payload, "model_dump_json", None)
    text: str
    if dump is not None:
        text = dump()
    else:
        try:
            text = json.dumps(payload, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(payload)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def hook_takes_payload(hook: Callable[..., Any]) -> bool:
    """Whether an `on_handoff` hook is called `(ctx, payload)` (True) or `(ctx)` (False);
    a hook that accepts neither raises `HandoffsError` (`invalid_team`)."""
    import inspect  # only when a hook is declared or called

    if not callable(hook):
        raise HandoffsError(f"Handoff on_handoff must be callable, not {hook!r}.",
                            code="invalid_team")
    try:
        sig = inspect.signature(hook)
    except (TypeError, ValueError):  # a builtin without a signature: assume (ctx, payload)
        return True
    for n in (2, 1):
        try:
            sig.bind(*range(n))
        except TypeError:
            continue
        return n == 2
    raise HandoffsError(
        f"Handoff on_handoff {getattr(hook, '__qualname__', hook)!r} must accept (ctx, payload) "
        f"or (ctx); its signature is {sig}.", code="invalid_team")


def _is_model_class(obj: Any) -> bool:
    import pydantic  # only when a payload is declared: keeps `import handoffs` light

    return isinstance(obj, type) and issubclass(obj, pydantic.BaseModel)


def handoff_context(record: HandoffRecord, payload: Any) -> HandoffContext:
    extra = record.extra
    return HandoffContext(
        record.source, record.target, record.reason, record.explanation,
        payload if payload is not None else record.payload, record.id, record.summary,
        extra.get("error"), extra.get("results"),
    )


def context_json(record: HandoffRecord) -> dict[str, Any]:
    return {"source_agent": record.source, "handoff_type": record.reason,
            "reason": record.explanation, "payload": record.payload,
            "record_id": record.id}


_HOW = {
    HandoffReason.USER_REQUEST: "The user chose to talk to you (they were with {source})",
    HandoffReason.ERROR_RECOVERY: "{source} could not go on, so the conversation is yours",
    HandoffReason.PLAN_STEP: "A plan gave you this step (from {source})",
    HandoffReason.PROGRAMMATIC: "The conversation was handed to you from {source}",
}
"""How the note says the conversation came, by kind, in words (the kind's code is for
records and events, not for a model)."""


def handoff_note(record: HandoffRecord, payload: Any = None, *, taking_over: bool = True
                 ) -> str:
    """The short note a target is given: who handed over, why, with what.

    `taking_over` (the default, and what a model is shown: the note sits in its history
    at the handoff, before its first answer) also says how to take over. False gives the
    note as it reads once the target has answered: empty unless it carries what the
    transcript does not show (a payload, the error to recover from, earlier steps'
    results)."""
    why = f": {record.explanation}" if record.explanation else "."
    if record.returns:
        note = (f"# Delegation\n{record.source} asks you for a task{why}\nDo the task "
                f"given last and answer with the result; it goes to {record.source}, not "
                "to the user.")
    else:
        how = _HOW.get(record.reason, "{source} handed the conversation to you").format(
            source=record.source)
        note = f"# Handoff\n{how}{why}"
        if taking_over:
            note += "\nAnswer the user now; do not mention the transfer."
    if payload is None:
        payload = record.payload
    extra = record.extra
    if not taking_over and payload is None and not (
            extra and (extra.get("error") or extra.get("results"))):
        return ""
    if payload is not None:
        note += f"\nPayload: {payload_preview(payload)}"
    if extra:
        error = extra.get("error")
        if error:
            note += f"\nThe error to recover from: {error.get('code')}: {error.get('message')}"
        results = extra.get("results")
        if results:
            note += "\nResults of earlier steps:\n" + "\n".join(
                f"- {k}: {v}" for k, v in results.items())
    return note


def note_message(record: HandoffRecord, summary: str | None = None) -> Note:
    """The handoff as its target's model sees it: a note in its history at the point of
    the handoff (never in the system text, so the system text, the tools and every
    earlier message stay byte-identical from call to call and a provider's prompt cache
    keeps hitting). Made from the record alone (its payload as stored), so every
    request renders it the same; a summary route's summary follows it."""
    text = handoff_note(record)
    if summary:
        text = f"{text}\n\n# Summary of the conversation so far\n{summary}"
    return Note(text, record.target, to_model=True)
