"""A response paused for a person's approval (or a client's result), as the session keeps
it: `SessionState.pending` (`runtime.decisions.approvals` makes it, `runtime.driver.
approval` decides it, `runtime.decisions.recovery` settles it when its turn died).

Typed, read by attribute; its stored form (`to_dict`, in every store, the session API's
JSON and the Temporal codec) is the plain JSON object earlier versions kept, key for key,
and `from_dict` reads what they stored. For code written against that object it reads
like one too (`pending["waiting"]`, `"caller" in pending`): a read-only mapping of its
stored form. A plain dict in that form assigned to `SessionState.pending` is read into a
`PendingApproval` where a store writes it (`pending_of`).

Plain slotted classes, not dataclasses: it sits on the import path. What it holds is never
changed in place: a decision or a caller makes a new value (`decided`, `with_caller`).
The delegate's own messages, its caller's settled results and planned transfer are kept
as stored (the JSON of their `to_dict`), so nothing the continuation changes reaches them;
`delegate_messages`, `tool_results` and `transfer_record` build them afresh.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .handoff import HandoffRecord
from .messages import HandoffMark, Message, Reasoning, ToolCall, ToolResult, message_from_dict
from .tools import ToolSpec


class CallDecision:
    """A decision on one waiting call: a person's approval or rejection, or a client's
    result of its own tool's call (`result`)."""

    __slots__ = ("approved", "is_error", "reason", "result")

    def __init__(self, approved: bool, reason: str = "", result: str | None = None,
                 is_error: bool = False) -> None:
        self.approved = approved
        """Whether the call may run (a client's result: always True)."""
        self.reason = reason
        """Why, as the person said it ("" if they did not); a rejection's result quotes it."""
        self.result = result
        """The client's result of a call of its own tool; None: a person's decision."""
        self.is_error = is_error
        """Whether the client's result is an error (False for a person's decision)."""

    def to_dict(self) -> dict[str, Any]:
        """The stored form: `approved` and `reason`, with `result` and `is_error` for a
        client's result."""
        d: dict[str, Any] = {"approved": self.approved, "reason": self.reason}
        if self.result is not None:
            d["result"] = self.result
            d["is_error"] = self.is_error
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CallDecision:
        return cls(d["approved"], d.get("reason", ""), d.get("result"),
                   bool(d.get("is_error", False)))

    def __repr__(self) -> str:
        return f"CallDecision({self.to_dict()!r})"


class PausedResponse:
    """A model's response kept unrun: whose it is, its text, its calls (unmarked) and the
    provider's reasoning state that came with it."""

    __slots__ = ("agent", "calls", "reasoning", "text")

    def __init__(self, agent: str, text: str, calls: Sequence[ToolCall],
                 reasoning: Sequence[Reasoning] = ()) -> None:
        self.agent = agent
        """The agent whose response it is."""
        self.text = text
        """The response's text."""
        self.calls = tuple(calls)
        """The response's calls (id, tool name, arguments), unmarked, in order."""
        self.reasoning = tuple(reasoning)
        """The provider's reasoning state of the response (empty: none, or a response
        stored before it was kept)."""

    def call(self, call_id: str) -> ToolCall | None:
        """The response's call with this id, if it has one."""
        return next((c for c in self.calls if c.id == call_id), None)

    def _calls(self) -> list[dict[str, Any]]:
        return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.calls]


class WaitingCaller(PausedResponse):
    """The main line's response whose delegation waits (`approvals.suspended`): what of
    it was settled before the delegate paused, and what it decided to do after."""

    __slots__ = ("delegation", "escalate", "marks", "results", "transfer")

    def __init__(self, agent: str, text: str, calls: Sequence[ToolCall],
                 results: Sequence[Mapping[str, Any] | None],
                 marks: Sequence[HandoffMark | None], delegation: int,
                 transfer: tuple[int, Mapping[str, Any]] | None = None,
                 escalate: tuple[str, str, str] | None = None,
                 reasoning: Sequence[Reasoning] = ()) -> None:
        PausedResponse.__init__(self, agent, text, calls, reasoning)
        self.results = tuple(results)
        """Each call's result as stored (`ToolResult.to_dict()`), None for a call not
        answered yet (`tool_results` builds them)."""
        self.marks = tuple(marks)
        """Each call's handoff mark so far (None: an ordinary call, or none yet)."""
        self.delegation = delegation
        """The index of the delegation call whose delegate waits."""
        self.transfer = transfer
        """The transfer the response decided, to make once its delegations are done: the
        call's index and the planned record as stored (`transfer_record`); None: none."""
        self.escalate = escalate
        """The failure (code, message, agent) a tool of the response escalated, kept for
        after the delegation; None: none."""

    def tool_results(self) -> list[ToolResult | None]:
        """The results settled before the delegate paused, rebuilt (None: not yet)."""
        out: list[ToolResult | None] = []
        for r in self.results:
            m = None if r is None else message_from_dict(r)
            assert m is None or isinstance(m, ToolResult)
            out.append(m)
        return out

    def transfer_record(self) -> tuple[int, HandoffRecord] | None:
        """The planned transfer, rebuilt: its call's index and its record."""
        if self.transfer is None:
            return None
        index, data = self.transfer
        return index, HandoffRecord.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """The stored form (the keys in the order earlier versions wrote them)."""
        d: dict[str, Any] = {
            "agent": self.agent, "text": self.text, "calls": self._calls(),
            "results": list(self.results), "marks": list(self.marks),
            "delegation": self.delegation,
            "transfer": None if self.transfer is None else list(self.transfer),
            "escalate": None if self.escalate is None else list(self.escalate),
        }
        if self.reasoning:
            d["reasoning"] = [r.to_dict() for r in self.reasoning]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WaitingCaller:
        transfer = d.get("transfer")
        escalate = d.get("escalate")
        return cls(d["agent"], d["text"], _read_calls(d["calls"]), d["results"], d["marks"],
                   d["delegation"], None if transfer is None else (transfer[0], transfer[1]),
                   None if escalate is None else (escalate[0], escalate[1], escalate[2]),
                   _read_reasoning(d))


class PendingApproval(PausedResponse, Mapping[str, Any]):
    """A response whose calls wait for a person's decision (or a client's result): the
    response, the calls that wait, the decisions so far; for a delegate's response, its
    line and its caller's half-done response. `SessionState.pending`."""

    __slots__ = ("caller", "client", "client_tools", "decisions", "messages", "record",
                 "waiting")

    def __init__(self, agent: str, text: str, calls: Sequence[ToolCall],
                 waiting: Sequence[str], decisions: Mapping[str, CallDecision] | None = None,
                 reasoning: Sequence[Reasoning] = (),
                 client_tools: Sequence[ToolSpec] | None = None, client: Sequence[str] = (),
                 record: str | None = None, messages: Sequence[Mapping[str, Any]] = (),
                 caller: WaitingCaller | None = None) -> None:
        PausedResponse.__init__(self, agent, text, calls, reasoning)
        self.waiting = tuple(waiting)
        """The ids of the calls that wait, in call order."""
        self.decisions: Mapping[str, CallDecision] = {} if decisions is None else decisions
        """The decisions so far, by call id (replaced by `decided`, never changed)."""
        self.client_tools = None if client_tools is None else tuple(client_tools)
        """The turn's client tools (`core.client_tools`), offered again when it goes on;
        None: the turn had none."""
        self.client = tuple(client)
        """The waiting calls that are the client's: its result decides them."""
        self.record = record
        """For a delegate's response: the id of its delegation's record; None: the
        response is the main line's."""
        self.messages = tuple(messages)
        """For a delegate's response: its own line's messages so far, as stored
        (`delegate_messages` builds them)."""
        self.caller = caller
        """For a delegate's response: its caller's response, which waits with it."""

    def undecided(self) -> list[str]:
        """The waiting calls with no decision yet, in call order."""
        decided = self.decisions
        return [c for c in self.waiting if c not in decided]

    def decided(self, call_id: str, decision: CallDecision) -> PendingApproval:
        """This pending approval with one more decision."""
        return self._with({**self.decisions, call_id: decision}, self.caller, self.client_tools)

    def with_caller(self, caller: WaitingCaller,
                    client_tools: Sequence[ToolSpec] | None) -> PendingApproval:
        """A delegate's paused response with its caller's (`approvals.suspended`), and
        the turn's client tools (None: keep this one's)."""
        return self._with(self.decisions, caller,
                          self.client_tools if client_tools is None else client_tools)

    def _with(self, decisions: Mapping[str, CallDecision], caller: WaitingCaller | None,
              client_tools: Sequence[ToolSpec] | None) -> PendingApproval:
        return PendingApproval(self.agent, self.text, self.calls, self.waiting, decisions,
                               self.reasoning, client_tools, self.client, self.record,
                               self.messages, caller)

    def delegate_messages(self) -> list[Message]:
        """A delegate's own messages so far, rebuilt."""
        return [message_from_dict(m) for m in self.messages]

    def to_dict(self) -> dict[str, Any]:
        """The stored form, as earlier versions kept it: `agent`, `text`, `calls`,
        `waiting`, `decisions`, then what applies of `reasoning`, `client_tools` and
        `client`, `record` and `messages`, `caller`."""
        d: dict[str, Any] = {
            "agent": self.agent, "text": self.text, "calls": self._calls(),
            "waiting": list(self.waiting),
            "decisions": {k: v.to_dict() for k, v in self.decisions.items()},
        }
        if self.reasoning:
            d["reasoning"] = [r.to_dict() for r in self.reasoning]
        if self.client_tools is not None:
            d["client_tools"] = [{"name": s.name, "description": s.description,
                                  "parameters": s.parameters} for s in self.client_tools]
            d["client"] = list(self.client)
        if self.record is not None:
            d["record"] = self.record
            d["messages"] = list(self.messages)
        if self.caller is not None:
            d["caller"] = self.caller.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PendingApproval:
        """A pending approval from its stored form (any version's)."""
        specs = d.get("client_tools")
        caller = d.get("caller")
        return cls(
            d["agent"], d["text"], _read_calls(d["calls"]), d.get("waiting", ()),
            {k: CallDecision.from_dict(v) for k, v in d.get("decisions", {}).items()},
            _read_reasoning(d),
            None if specs is None else [ToolSpec(s["name"], s["description"],
                                                 s["parameters"]) for s in specs],
            d.get("client", ()), d.get("record"), d.get("messages", ()),
            None if caller is None else WaitingCaller.from_dict(caller))

    # Read access to the stored form, for code written when `pending` was that dict.
    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __repr__(self) -> str:
        return f"PendingApproval({self.to_dict()!r})"


def pending_of(value: PendingApproval | Mapping[str, Any] | None) -> PendingApproval | None:
    """`SessionState.pending` typed: a `PendingApproval` as it is, a mapping in its stored
    form (what earlier versions held, or a caller assigned) read into one."""
    if value is None or isinstance(value, PendingApproval):
        return value
    return PendingApproval.from_dict(value)


def _read_calls(calls: Sequence[Mapping[str, Any]]) -> list[ToolCall]:
    return [ToolCall(c["id"], c["name"], c["arguments"]) for c in calls]


def _read_reasoning(d: Mapping[str, Any]) -> tuple[Reasoning, ...]:
    return tuple(Reasoning.from_dict(r) for r in d.get("reasoning") or ())
