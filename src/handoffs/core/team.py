"""Team: the agents, their routes resolved once at build time, and the graph's checks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import TeamError
from .agent import Agent
from .handoff import Handoff
from .names import TOOL_NAME_RULE, is_valid_tool_name
from .output import FINAL_OUTPUT_TOOL, OutputSpec, output_spec
from .policy import HandoffPolicy
from .tools import Tool, ToolSpec, context_problem


@dataclass(slots=True, frozen=True)
class Route:
    """A handoff route resolved against the team: the declaration and its target."""

    source: str
    """The agent that declares the route."""
    handoff: Handoff
    """The declaration, as given (history, payload, returns, respond, ...)."""
    target: Agent
    """The agent the route goes to."""
    tool_name: str
    """The tool the model calls to take the route (provider-valid, unique in the agent)."""
    spec: ToolSpec
    """What the model is told about that tool."""


@dataclass(slots=True, frozen=True)
class AgentPlan:
    """Everything about one agent that can be decided once, when the team is built."""

    agent: Agent
    """The agent this plan is for."""
    tools: Mapping[str, Tool]
    """Its ordinary tools by name."""
    routes: Mapping[str, Route]
    """Handoff routes by tool name."""
    routes_by_target: Mapping[str, Route]
    """Handoff routes by target agent name."""
    specs: tuple[ToolSpec, ...]
    """Tool specs offered to the model when no route is conditionally enabled."""
    static: bool
    """True when no route's `enabled` is a callable, so `specs` is always the answer."""
    output: OutputSpec | None = None
    """The agent's output type as providers are told it (None: the agent answers in text)."""
    approvals: bool = False
    """True when one of its tools may need a person's approval (`Tool.needs_approval`)."""


class Team:
    """A set of agents that hand off to one another.

    Names are resolved and the graph is checked once, here: a team that builds can run.
    """

    __slots__ = ("_plans", "agents", "entry", "fallback", "policy", "summarizer", "supervisor")

    def __init__(
        self,
        agents: Iterable[Agent],
        entry: str | Agent | None = None,
        supervisor: str | Agent | None = None,
        fallback: str | Agent | None = None,
        policy: HandoffPolicy | None = None,
        summarizer: Any = None,
    ) -> None:
        self.agents: tuple[Agent, ...] = tuple(agents)
        if not self.agents:
            raise TeamError("A team needs at least one agent.")
        by_name: dict[str, Agent] = {}
        for a in self.agents:
            if not isinstance(a, Agent):
                raise TeamError(f"Team members must be Agent objects, got {a!r}.")
            if a.name in by_name:
                raise TeamError(f"Two agents are named {a.name!r}; agent names must be unique.")
            by_name[a.name] = a
        with_mcp = [a.name for a in self.agents if a.mcp]
        if with_mcp:
            from ..mcp.servers import require_sdk

            require_sdk(with_mcp)
        self.entry: str = self._member(entry, "entry", by_name) or self.agents[0].name
        self.supervisor: str | None = self._member(supervisor, "supervisor", by_name)
        self.fallback: str | None = self._member(fallback, "fallback", by_name)
        self.policy: HandoffPolicy = policy or HandoffPolicy()
        self.summarizer: Any = summarizer
        """The default `Summarizer` for `history="summary"` routes."""
        self._plans: dict[str, AgentPlan] = {
            a.name: self._plan(a, by_name) for a in self.agents
        }

    @staticmethod
    def _member(ref: str | Agent | None, role: str, by_name: Mapping[str, Agent]) -> str | None:
        if ref is None:
            return None
        name = ref if isinstance(ref, str) else ref.name
        if name not in by_name:
            raise TeamError(
                f"The team's {role} {name!r} is not one of its agents "
                f"({', '.join(by_name)}). Add it to the team or fix the name."
            )
        return name

    @staticmethod
    def _plan(agent: Agent, by_name: Mapping[str, Agent]) -> AgentPlan:
        tools: dict[str, Tool] = {}
        for t in agent.tools:
            if not is_valid_tool_name(t.name):
                raise TeamError(
                    f"Agent {agent.name!r}: the tool name {t.name!r} is refused by model "
                    f"providers: {TOOL_NAME_RULE}. Rename it with @tool(name=...), or leave "
                    "the name out to use the function's name."
                )
            if t.name in tools:
                raise TeamError(
                    f"Agent {agent.name!r} has two tools named {t.name!r}; tool names must "
                    "be unique within an agent. Rename one with @tool(name=...)."
                )
            problem = context_problem(t)
            if problem is not None:
                raise TeamError(f"Agent {agent.name!r}: tool {t.name!r} cannot work: {problem}")
            tools[t.name] = t
        routes: dict[str, Route] = {}
        by_target: dict[str, Route] = {}
        for item in agent.handoffs:
            h = item if isinstance(item, Handoff) else Handoff(item)
            target_name = h.target_name
            target = by_name.get(target_name)
            if target is None:
                raise TeamError(
                    f"Agent {agent.name!r} hands off to {target_name!r}, which is not in "
                    f"the team ({', '.join(by_name)}). Add that agent or remove the route."
                )
            if target_name in by_target:
                raise TeamError(
                    f"Agent {agent.name!r} declares two routes to {target_name!r}; keep one."
                )
            if h.tool_name is not None and not is_valid_tool_name(h.tool_name):
                raise TeamError(
                    f"Agent {agent.name!r}: Handoff(tool_name={h.tool_name!r}) to "
                    f"{target_name!r} is refused by model providers: {TOOL_NAME_RULE}. "
                    "Choose such a name, or leave tool_name out to get "
                    f"{Handoff.default_tool_name(target_name)!r}."
                )
            name = h.tool_name or Handoff.default_tool_name(target_name)
            if name in tools:
                raise TeamError(
                    f"Agent {agent.name!r}: the handoff tool name {name!r} collides with a "
                    "tool of the same name. Rename the tool or set Handoff(tool_name=...)."
                )
            other = routes.get(name)
            if other is not None:
                raise TeamError(
                    f"Agent {agent.name!r}: the routes to {other.target.name!r} and "
                    f"{target_name!r} both get the tool name {name!r}; tool names must be "
                    "unique within an agent. Set Handoff(tool_name=...) on one of them."
                )
            route = Route(agent.name, h, target, name, _route_spec(h, target, name))
            routes[name] = route
            by_target[target_name] = route
        if agent.tool_choice is not None:
            _check_tool_choice(agent, tools, routes)
        static = all(not callable(r.handoff.enabled) for r in routes.values())
        specs = tuple(t.spec for t in tools.values()) + tuple(
            r.spec for r in routes.values() if r.handoff.enabled is True and r.target.enabled
        )
        output = None
        if agent.output_type is not None:
            output = output_spec(agent.output_type, agent.name)
            if FINAL_OUTPUT_TOOL in tools or FINAL_OUTPUT_TOOL in routes:
                raise TeamError(
                    f"Agent {agent.name!r} has an output_type and a tool named "
                    f"{FINAL_OUTPUT_TOOL!r}, the name some providers get the answer through; "
                    "rename the tool.")
        approvals = any(t.needs_approval is not False for t in tools.values())
        return AgentPlan(agent, tools, routes, by_target, specs, static, output, approvals)

    # -- lookups used by the runner and the policy -------------------------------------

    def get(self, name: str) -> Agent | None:
        """The agent called `name`, or None."""
        plan = self._plans.get(name)
        return plan.agent if plan is not None else None

    def __getitem__(self, name: str) -> Agent:
        """The agent called `name`; `TeamError` if there is none."""
        plan = self._plans.get(name)
        if plan is None:
            raise TeamError(f"No agent named {name!r} in this team.")
        return plan.agent

    def __contains__(self, name: object) -> bool:
        """Whether the team has an agent called `name`."""
        return name in self._plans

    def plan(self, name: str) -> AgentPlan:
        """What was decided for agent `name` when the team was built: its tools, routes
        and tool specs (the runner reads these on every model call)."""
        return self._plans[name]

    def handoff_targets(self, source: str) -> list[str]:
        """The agents `source` declares routes to (in declaration order)."""
        plan = self._plans.get(source)
        return list(plan.routes_by_target) if plan else []

    # -- export ----------------------------------------------------------------------

    def mermaid(self) -> str:
        """The handoff graph as Mermaid flowchart text: solid arrows transfer, dotted
        arrows delegate and return, the entry agent is marked."""
        lines = ["flowchart LR"]
        for a in self.agents:
            label = a.label.replace('"', "'")
            shape = f'(["{label}"])' if a.name == self.entry else f'["{label}"]'
            lines.append(f"    {_mid(a.name)}{shape}")
        for plan in self._plans.values():
            for r in plan.routes.values():
                arrow = "-.->" if r.handoff.returns else "-->"
                lines.append(f"    {_mid(r.source)} {arrow}|{r.tool_name}| {_mid(r.target.name)}")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"Team({', '.join(a.name for a in self.agents)}; entry={self.entry!r})"


TOOL_CHOICES = ("auto", "required", "none")

REASON_DESCRIPTION = "Why you are handing off, in one sentence."
"""The description of a one-way handoff tool's `reason` argument."""
DELEGATION_REASON_DESCRIPTION = "Why you are asking, in one sentence."
"""The description of a delegation tool's `reason` argument (with these two, a handoff
tool is told apart from an ordinary one by what a model is shown)."""


def _check_tool_choice(agent: Agent, tools: Mapping[str, Tool], routes: Mapping[str, Route]
                       ) -> None:
    """`Agent(tool_choice=...)` must name something the agent can be offered: what
    `models.tool_choice.resolve_tool_choice` will accept on every request."""
    choice: object = agent.tool_choice
    if choice in ("auto", "none"):
        return
    usable = [r for r in routes.values()
              if r.handoff.enabled is not False and r.target.enabled]
    if choice == "required":
        if tools or usable:
            return
        raise TeamError(
            f"Agent {agent.name!r} has tool_choice='required' but no tools or enabled "
            "handoffs to call; give it one, or use 'auto'.")
    route: Route | None = None
    if isinstance(choice, str):
        if choice in tools:
            return
        route = routes.get(choice) or routes.get(Handoff.default_tool_name(choice))
    if route is not None and route in usable:
        return
    if route is not None:
        raise TeamError(
            f"Agent {agent.name!r} has tool_choice={choice!r}, but its handoff to "
            f"{route.target.name!r} is disabled, so that tool is never offered. Enable the "
            "route or choose another tool_choice.")
    custom = [f"{r.tool_name!r}" for r in routes.values() if r.target.name == choice]
    hint = f" (the route to {choice!r} is named {custom[0]})" if custom else ""
    names = [*TOOL_CHOICES, *tools, *routes,
             *(r.target.name for r in routes.values()
               if r.tool_name == Handoff.default_tool_name(r.target.name))]
    raise TeamError(
        f"Agent {agent.name!r} has tool_choice={choice!r}, which names no tool or handoff "
        f"of that agent{hint}; tool_choice must be one of: {', '.join(names)}.")


def _mid(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)


def _route_spec(h: Handoff, target: Agent, tool_name: str) -> ToolSpec:
    if h.description is not None:
        description = h.description
    else:
        verb = "Ask" if h.returns else "Hand the conversation to"
        description = f"{verb} {target.label}"
        description += f": {target.description}" if target.description else "."
    props: dict[str, Any]
    required: list[str]
    if h.returns:  # a delegation: the target works on a task and answers the caller
        props = {
            "task": {"type": "string", "description": (
                f"What {target.label} must do and return to you: the question or the work, "
                "with every detail it needs. Its answer comes back to you, not to the user."
            )},
            "reason": {"type": "string", "description": DELEGATION_REASON_DESCRIPTION},
        }
        required = ["task"]
    else:
        props = {"reason": {"type": "string", "description": REASON_DESCRIPTION}}
        required = []
    if h.payload is not None:
        schema = h.payload.model_json_schema()
        # Nested models put their definitions under $defs with refs to the document root,
        # so the definitions move to the root of the tool's schema.
        defs = schema.pop("$defs", None)
        if h.payload.model_config.get("extra") != "allow":
            schema.setdefault("additionalProperties", False)  # the runner refuses extras
        props["payload"] = schema
        required.append("payload")
    else:
        defs = None
    params: dict[str, Any] = {"type": "object", "properties": props,
                              "additionalProperties": False}
    if defs:
        params["$defs"] = defs
    if required:
        params["required"] = required
    return ToolSpec(tool_name, description, params)
