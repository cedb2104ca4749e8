"""Tools the client runs (AG-UI's frontend tools: a UI action, a confirm dialog):
offered to the agents of the turn's main line for one run (`runner.run(...,
client_tools=[...])`), never run by the server.

A call of one pauses the turn as a call that waits for approval does (status
`waiting_for_approval`, the call marked as the client's in `SessionState.pending`); the
client runs the tool and sends its result (`runner.submit_tool_result`), which becomes
the call's result, and the turn goes on. Nothing of the call is in the transcript before
its result: the model never sees it as run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import HandoffsError
from .names import TOOL_NAME_RULE, is_valid_tool_name
from .output import FINAL_OUTPUT_TOOL
from .tools import Tool, ToolSpec

if TYPE_CHECKING:
    from .team import Team


def _never(**_: Any) -> Any:
    raise HandoffsError("A client's tool is run by the client, never by the server.",
                        code="client_tool")


def client_tool(spec: ToolSpec) -> Tool:
    """The `Tool` a client's tool is offered as: its call waits (`needs_approval`) for the
    client's result; its function is never called (it raises if it were)."""
    return Tool(spec.name, spec.description, spec.parameters, _never, needs_approval=True)


def client_tools(team: Team, specs: Iterable[ToolSpec | Mapping[str, Any]]
                 ) -> dict[str, Tool]:
    """The client's tools by name, checked: a valid name each, once, that no agent of the
    team uses for a tool or a route (refused with `tool_name_taken`: the team's own tool
    would be shadowed), and an object schema."""
    taken = _team_names(team)
    out: dict[str, Tool] = {}
    for s in specs:
        spec = s if isinstance(s, ToolSpec) else ToolSpec(
            str(s.get("name") or ""), s.get("description") or "", s.get("parameters") or {})
        name = spec.name
        if not is_valid_tool_name(name):
            raise HandoffsError(f"The client's tool {name!r} has a name no model accepts: "
                                f"{TOOL_NAME_RULE}.", code="invalid_argument")
        if name in out:
            raise HandoffsError(f"The client sent two tools named {name!r}.",
                                code="invalid_argument")
        if name in taken or name.startswith(("transfer_to_", "ask_")):
            raise HandoffsError(
                f"The client's tool {name!r} has the name of a tool or handoff of the "
                "team's agents; rename the client's tool.", code="tool_name_taken")
        params = spec.parameters or {"type": "object", "properties": {}}
        if not isinstance(params, dict) or params.get("type", "object") != "object":
            raise HandoffsError(f"The parameters of the client's tool {name!r} must be "
                                "a JSON schema of an object.", code="invalid_argument")
        out[name] = client_tool(ToolSpec(name, str(spec.description or ""), params))
    return out


def _team_names(team: Team) -> set[str]:
    names = {FINAL_OUTPUT_TOOL}
    for agent in team.agents:
        plan = team.plan(agent.name)
        names.update(plan.tools)
        names.update(plan.routes)
    return names
