"""Our events as AG-UI events, with the protocol's own types (`ag_ui.core`, the `agui`
extra): what `POST /v1/agui` streams.

| ours | AG-UI |
| --- | --- |
| (the run begins) | `RUN_STARTED`, `STATE_SNAPSHOT` {active_agent, shared} |
| `agent_started` | `STEP_STARTED` (step_name: the agent), the previous agent's `STEP_FINISHED` |
| `text_delta`, `message` | `TEXT_MESSAGE_START` (name: the agent) / `_CONTENT` / `_END` |
| `tool_called`, `tool_result` | `TOOL_CALL_START` / `_ARGS` / `_END`, `TOOL_CALL_RESULT` |
| `agent_handoff` | `CUSTOM` `handoff` {source, target, reason, kind, trigger, record_id} |
| a delegation's `agent_handoff` | also `SUBAGENT_STARTED` (its id: the record's) |
| the delegate's events | as above, with that `subagentRunId` |
| `agent_returned` | `SUBAGENT_FINISHED` (result: the delegate's answer), or `SUBAGENT_ERROR` |
| `agent_changed` | `STATE_DELTA` replacing `/active_agent` |
| `tool_progress` | `ACTIVITY_SNAPSHOT` `tool_progress` {agent, tool, call_id, message} |
| `custom_event` | `CUSTOM` (name: the event's name, value: its data) |
| `approval_requested` | an interrupt of `RUN_FINISHED` (outcome `interrupt`) |
| a client's tool's call | `TOOL_CALL_*`; in `RUN_FINISHED`'s `awaiting_tool_results` |
| a client's tool's result | nothing (the client sent it) |
| `run_completed` | `STATE_DELTA` of shared memory, `RUN_FINISHED` |
| `run_failed` | `RUN_ERROR` {message, code} |

A tool call's progress snapshots share one activity message (`progress-CALL_ID`): each
replaces the one before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from . import customer

APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"},
                   "reason": {"type": "string", "description": "Why not (a rejection)."}},
    "required": ["approved"],
}
"""The form an approval interrupt asks for: resume with `{"approved": true}`, or
`{"approved": false, "reason": ...}`."""


def shared_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """JSON Patch operations that turn `/shared` from `before` into `after`."""
    ops: list[dict[str, Any]] = []
    for key, value in after.items():
        path = "/shared/" + key.replace("~", "~0").replace("/", "~1")
        if key not in before:
            ops.append({"op": "add", "path": path, "value": value})
        elif before[key] != value:
            ops.append({"op": "replace", "path": path, "value": value})
    for key in before:
        if key not in after:
            ops.append({"op": "remove",
                        "path": "/shared/" + key.replace("~", "~0").replace("/", "~1")})
    return ops


class Translator:
    """One run's events, ours in, AG-UI's out (each `ag_ui.core` event objects)."""

    def __init__(self, thread_id: str, run_id: str, new_id: Callable[[], str]) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.new_id = new_id
        self.open: tuple[str, str, str] | None = None
        """The text message being streamed: (message id, agent, text so far)."""
        self.interrupts: list[Any] = []
        self.client_calls: list[str] = []
        """Calls of the client's tools this run ended with: the client sends their
        results in its next run."""
        self.step: str | None = None
        """The main line's open step (its agent)."""
        self.subagents: list[tuple[str, str, str | None]] = []
        """The delegations under way, innermost last: (delegate, subagent run id, its
        open step)."""

    def started(self, active_agent: str, shared: Mapping[str, Any]) -> list[Any]:
        from ag_ui.core import RunStartedEvent, StateSnapshotEvent

        return [RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id),
                StateSnapshotEvent(snapshot={"active_agent": active_agent,
                                             "shared": dict(shared)})]

    def _sub(self, agent: Any) -> str | None:
        """The subagent run `agent` works in now (None: the main line)."""
        for name, rid, _ in reversed(self.subagents):
            if name == agent:
                return rid
        return None

    def event(self, e: Mapping[str, Any]) -> list[Any]:
        """The AG-UI events one of ours becomes (none for most)."""
        kind = e["type"]
        if kind == "text_delta":
            return self._delta(e["agent"], e["text"])
        if kind == "message":
            return self._message(e["agent"], e["text"])
        out = self._close()
        if kind == "tool_called":
            out += self._tool_call(e)
        elif kind == "tool_result":
            if e.get("client"):  # the client's own result: it has it already
                return out
            from ag_ui.core import ToolCallResultEvent

            shown = customer.event(dict(e))
            out.append(ToolCallResultEvent(message_id=self.new_id(), tool_call_id=e["call_id"],
                                           content=shown["text"], role="tool",
                                           subagent_run_id=self._sub(e.get("agent"))))
        elif kind == "agent_started":
            out += self._step(e["agent"])
        elif kind == "agent_returned":
            out += self._returned(e)
        elif kind == "agent_handoff":
            from ag_ui.core import CustomEvent, SubagentStartedEvent

            out.append(CustomEvent(name="handoff", value={
                "source": e["source"], "target": e["target"],
                "reason": customer.event(dict(e)).get("explanation") or "",
                "kind": "delegation" if e.get("returns") else "transfer",
                "trigger": e.get("reason"), "record_id": e.get("record_id")}))
            if e.get("returns"):
                rid = str(e.get("record_id") or self.new_id())
                out.append(SubagentStartedEvent(
                    subagent_run_id=rid, name=e["target"],
                    description=customer.event(dict(e)).get("explanation") or None,
                    parent_subagent_run_id=self._sub(e["source"])))
                self.subagents.append((e["target"], rid, None))
        elif kind == "tool_progress":
            from ag_ui.core import ActivitySnapshotEvent

            out.append(ActivitySnapshotEvent(
                message_id=f"progress-{e['call_id']}", activity_type="tool_progress",
                content={"agent": e["agent"], "tool": e["tool"], "call_id": e["call_id"],
                         "message": e["message"]},
                subagent_run_id=self._sub(e.get("agent"))))
        elif kind == "custom_event":
            from ag_ui.core import CustomEvent

            out.append(CustomEvent(name=e["name"], value=e["data"],
                                   subagent_run_id=self._sub(e.get("agent"))))
        elif kind == "agent_changed":
            from ag_ui.core import StateDeltaEvent

            out.append(StateDeltaEvent(delta=[{"op": "replace", "path": "/active_agent",
                                               "value": e["agent"]}]))
        elif kind == "approval_requested" and e.get("client"):
            self.client_calls.append(e["call_id"])  # the client runs it: no interrupt
        elif kind == "approval_requested":
            from ag_ui.core import Interrupt

            self.interrupts.append(Interrupt(
                id=e["call_id"], reason="tool_approval", tool_call_id=e["call_id"],
                message=f"{e['agent']} asks to run {e['tool']}: approve or reject it.",
                response_schema=APPROVAL_SCHEMA,
                metadata={"agent": e["agent"], "tool": e["tool"],
                          "arguments": e.get("arguments")}))
        return out

    def finished(self, result: Mapping[str, Any], shared_before: Mapping[str, Any],
                 shared_after: Mapping[str, Any]) -> list[Any]:
        """The end of a run that ended (`result`: the `RunResult` as a dict): the change
        of shared memory, then `RUN_FINISHED`, or `RUN_ERROR` for a failed turn."""
        from ag_ui.core import (
            RunErrorEvent,
            RunFinishedEvent,
            RunFinishedInterruptOutcome,
            RunFinishedSuccessOutcome,
            StateDeltaEvent,
        )

        out = self._close() + self._end_steps()
        patch = shared_patch(shared_before, shared_after)
        if patch:
            out.append(StateDeltaEvent(delta=patch))
        if result.get("status") == "failed":
            said = customer.error((result.get("error") or {}).get("code"))
            out.append(RunErrorEvent(message=said["message"], code=said["code"]))
            return out
        outcome: Any = (RunFinishedInterruptOutcome(interrupts=self.interrupts)
                        if self.interrupts else RunFinishedSuccessOutcome())
        ended: dict[str, Any] = {"output": result.get("output"),
                                 "agent": result.get("agent"), "status": result.get("status")}
        if self.client_calls:  # the client runs these, then sends their results
            ended["awaiting_tool_results"] = list(self.client_calls)
        out.append(RunFinishedEvent(
            thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, result=ended))
        return out

    def failed(self, code: str, message: str) -> list[Any]:
        """A run that could not run at all."""
        from ag_ui.core import RunErrorEvent

        return [*self._close(), *self._end_steps(), RunErrorEvent(message=message, code=code)]

    # -- steps (each agent at work) and subagents (each delegation) -------------------

    def _step(self, agent: str) -> list[Any]:
        from ag_ui.core import StepFinishedEvent, StepStartedEvent

        out: list[Any] = []
        if self.subagents and self.subagents[-1][0] == agent:
            name, rid, step = self.subagents[-1]
            if step is not None:
                out.append(StepFinishedEvent(step_name=step, subagent_run_id=rid))
            self.subagents[-1] = (name, rid, agent)
            return [*out, StepStartedEvent(step_name=agent, subagent_run_id=rid)]
        if self.step is not None:
            out.append(StepFinishedEvent(step_name=self.step))
        self.step = agent
        return [*out, StepStartedEvent(step_name=agent)]

    def _returned(self, e: Mapping[str, Any]) -> list[Any]:
        from ag_ui.core import (
            StepFinishedEvent,
            SubagentErrorEvent,
            SubagentFinishedEvent,
            SubagentFinishedSuccessOutcome,
        )

        source = e["source"]
        at = next((i for i in range(len(self.subagents) - 1, -1, -1)
                   if self.subagents[i][0] == source), None)
        if at is None:
            return []
        out: list[Any] = []
        for name, rid, step in reversed(self.subagents[at:]):
            if step is not None:
                out.append(StepFinishedEvent(step_name=step, subagent_run_id=rid))
            if name != source:
                out.append(SubagentFinishedEvent(subagent_run_id=rid))
            elif e.get("ok", True):
                out.append(SubagentFinishedEvent(
                    subagent_run_id=rid, result=e.get("text"),
                    outcome=SubagentFinishedSuccessOutcome()))
            else:
                out.append(SubagentErrorEvent(subagent_run_id=rid,
                                              message=str(e.get("text") or "failed")))
        del self.subagents[at:]
        return out

    def _end_steps(self) -> list[Any]:
        from ag_ui.core import StepFinishedEvent, SubagentFinishedEvent

        out: list[Any] = []
        for _, rid, step in reversed(self.subagents):
            if step is not None:
                out.append(StepFinishedEvent(step_name=step, subagent_run_id=rid))
            out.append(SubagentFinishedEvent(subagent_run_id=rid))
        self.subagents.clear()
        if self.step is not None:
            out.append(StepFinishedEvent(step_name=self.step))
            self.step = None
        return out

    # -- text messages: one per agent message, streamed when the model streams -------

    def _delta(self, agent: str, text: str) -> list[Any]:
        from ag_ui.core import TextMessageContentEvent

        out = []
        if self.open is not None and self.open[1] != agent:
            out += self._close()
        if self.open is None:
            out += self._start(agent)
        assert self.open is not None
        mid, _, so_far = self.open
        self.open = (mid, agent, so_far + text)
        out.append(TextMessageContentEvent(message_id=mid, delta=text,
                                           subagent_run_id=self._sub(agent)))
        return out

    def _message(self, agent: str, text: str) -> list[Any]:
        from ag_ui.core import TextMessageContentEvent

        out: list[Any] = []
        if self.open is not None and (self.open[1] != agent
                                      or not text.startswith(self.open[2])):
            out += self._close()  # what was streamed was not this message
        if self.open is None:
            out += self._start(agent)
            assert self.open is not None
        mid, _, so_far = self.open
        rest = text[len(so_far):]
        if rest:
            out.append(TextMessageContentEvent(message_id=mid, delta=rest,
                                               subagent_run_id=self._sub(agent)))
        self.open = (mid, agent, text)
        return out + self._close()

    def _start(self, agent: str) -> list[Any]:
        from ag_ui.core import TextMessageStartEvent

        mid = self.new_id()
        self.open = (mid, agent, "")
        return [TextMessageStartEvent(message_id=mid, role="assistant", name=agent,
                                      subagent_run_id=self._sub(agent))]

    def _close(self) -> list[Any]:
        if self.open is None:
            return []
        from ag_ui.core import TextMessageEndEvent

        mid, agent, _ = self.open
        self.open = None
        return [TextMessageEndEvent(message_id=mid, subagent_run_id=self._sub(agent))]

    def _tool_call(self, e: Mapping[str, Any]) -> list[Any]:
        from ag_ui.core import ToolCallArgsEvent, ToolCallEndEvent, ToolCallStartEvent

        cid = e["call_id"]
        args = e.get("arguments")
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        sub = self._sub(e.get("agent"))
        return [ToolCallStartEvent(tool_call_id=cid, tool_call_name=e["tool"],
                                   subagent_run_id=sub),
                ToolCallArgsEvent(tool_call_id=cid, delta=text, subagent_run_id=sub),
                ToolCallEndEvent(tool_call_id=cid, subagent_run_id=sub)]
