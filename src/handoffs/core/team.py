"""Team: the agents, their routes resolved once at build time, and the graph's checks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import TeamError
from .agent import Agent
from .guardrails import asked_agents
from .handoff import Handoff
from .handoff_tool import PayloadShape, handoff_tool, routing_text
from .names import TOOL_NAME_RULE, is_valid_tool_name
from .narration import Destination, destination
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
    shape: PayloadShape = "none"
    """How the payload travels in the call's arguments (`core.handoff_tool`)."""
    example: str = ""
    """A literal call of the tool that would be accepted (shown when one is refused)."""


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
    handoff_text: str = ""
    """What its system text says about handing off (`Team(handoff_instructions=...)`);
    empty when it has no routes or the team or agent turned it off."""
    parallel_tool_calls: bool | None = None
    """`ModelRequest.parallel_tool_calls` for its requests (`Agent.parallel_tool_calls`)."""
    destinations: tuple[Destination, ...] = ()
    """Its one-way routes in the words a model may name them by (narrated handoffs)."""


def _asked(agents: Iterable[Agent], by_name: Mapping[str, Agent]) -> dict[str, Agent]:
    """The non-member agents the members' guardrails declare they ask, by name; a name
    that is a member's or another asked agent's refused (the worker could not tell
    them apart)."""
    asked: dict[str, Agent] = {}
    for a in agents:
        for g in (*a.input_guardrails, *a.output_guardrails):
            for helper in asked_agents(g):
                if not isinstance(helper, Agent):
                    raise TeamError(f"guardrail(asks=...) takes Agent objects, got {helper!r}.")
                known = by_name.get(helper.name) or asked.get(helper.name)
                if known is helper:
                    continue
                if known is not None:
                    raise TeamError(
                        f"Two agents are named {helper.name!r} (one asked by a guardrail of "
                        f"{a.name!r}); agent names must be unique.")
                asked[helper.name] = helper
    return asked


class Team:
    """A set of agents that hand off to one another.

    Names are resolved and the graph is checked once, here: a team that builds can run.
    """

    __slots__ = ("_plans", "agents", "approvals_by", "asked", "context_public",
                 "context_type", "entry", "fallback", "handoff_instructions", "policy",
                 "routing", "suggested_prompts", "summarizer", "supervisor")

    def __init__(
        self,
        agents: Iterable[Agent],
        entry: str | Agent | None = None,
        supervisor: str | Agent | None = None,
        fallback: str | Agent | None = None,
        policy: HandoffPolicy | None = None,
        summarizer: Any = None,
        handoff_instructions: bool | str = True,
        suggested_prompts: Iterable[str] = (),
        routing: Literal["tools", "choice", "calibrated"] = "tools",
        approvals_by: Literal["operator", "user"] = "operator",
        context_type: type[Any] | None = None,
        context_public: Iterable[str] | Callable[[Mapping[str, Any]], Mapping[str, Any]] = (),
    ) -> None:
        """`handoff_instructions`: True adds `DEFAULT_HANDOFF_INSTRUCTIONS` (a few lines on
        how a transfer is made: a tool call, never announced in words) to the system text
        of every agent that has routes; a string adds that text instead; False adds
        nothing. An agent's own `Agent(handoff_instructions=...)` wins over the team's.
        `suggested_prompts`: first messages a user may start with (the web page offers
        them in an empty conversation; `GET /v1/team` lists them).
        `routing`: how agents that set no `Agent(routing=...)` route (`tools`, or
        `choice`: one constrained choice per user message, `calibrated`: that choice corrected
        for the model's own leaning; see `Agent.routing`).
        `approvals_by`: who decides a call that waits for approval: `operator` (the
        operator key, `runner.approve` in code) or `user` (the conversation's own user
        too, through the protocol it speaks: an A2A reply on the task, an AG-UI resume).
        `context_type`: a pydantic model class every field of which has a default: the
        session's typed context, created for a new session (`context_type()`, or from
        `runner.run(context=...)`'s instance or dict), stored with the session, given to
        tools, instructions, guardrails and hooks as `ctx.context`; a turn's changes are
        kept only if the turn does not fail (`core.typed_context`). None: `ctx.context`
        is whatever each `run` call passes, never stored.
        `context_public`: what of that context a session's own token may read (`GET
        /v1/sessions/{id}`, `context_changed` events): field names, or a callable from
        fields to the fields shown; empty: nothing (the operator key sees all of it)."""
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
        if not isinstance(handoff_instructions, bool | str):
            raise TeamError("Team(handoff_instructions=...) takes True, False or a text, "
                            f"not {handoff_instructions!r}.")
        self.handoff_instructions: bool | str = handoff_instructions
        """What agents with routes are told about handing off (see the constructor)."""
        if routing not in ("tools", "choice", "calibrated"):
            raise TeamError(f"Team(routing=...) takes 'tools', 'choice' or 'calibrated', "
                            f"not {routing!r}.")
        self.routing: Literal["tools", "choice", "calibrated"] = routing
        """How agents that set no `Agent(routing=...)` route."""
        self.suggested_prompts: tuple[str, ...] = _prompts(suggested_prompts)
        """First messages a user may start with, in order (empty: none suggested)."""
        if approvals_by not in ("operator", "user"):
            raise TeamError("Team(approvals_by=...) is 'operator' or 'user', "
                            f"not {approvals_by!r}.")
        self.approvals_by: Literal["operator", "user"] = approvals_by
        """Who decides a waiting call besides code: the operator, or the user too."""
        self.context_type: type[Any] | None = context_type
        """The session's typed context (None: `ctx.context` is the caller's, not stored)."""
        self.context_public: tuple[str, ...] | Callable[[Mapping[str, Any]],
                                                        Mapping[str, Any]] = ()
        """What a customer may see of the context: field names or a projection."""
        if context_type is not None or context_public != ():
            from . import typed_context

            if context_type is not None:
                typed_context.check_type(context_type)
            self.context_public = typed_context.check_public(context_type, context_public)
        self._plans: dict[str, AgentPlan] = {
            a.name: self._plan(a, by_name, handoff_instructions) for a in self.agents
        }
        self.asked: Mapping[str, Agent] = _asked(self.agents, by_name)
        """The agents its members' guardrails ask that are not members, by name
        (`guardrail(asks=...)`): never handed to, reachable only by `ctx.ask`; a
        Temporal worker answers for them by name."""

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
    def _plan(agent: Agent, by_name: Mapping[str, Agent], instructions: bool | str
              ) -> AgentPlan:
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
                    f"{_default_name(h)!r}."
                )
            name = h.tool_name or _default_name(h)
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
            tool = handoff_tool(h, target, name)
            route = Route(agent.name, h, target, name, tool.spec, tool.shape, tool.example)
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
        own = agent.handoff_instructions
        kinds = {r.handoff.returns for r in routes.values()}
        parallel = agent.parallel_tool_calls
        if parallel is None and False in kinds and not tools and not agent.mcp:
            # Only routes: one transfer per response, so a second call is never useful.
            # With tools of its own, parallel calls save round trips, and the policy
            # refuses a second transfer in one response (`multiple_handoffs`).
            parallel = False
        return AgentPlan(agent, tools, routes, by_target, specs, static, output, approvals,
                         routing_text(kinds, instructions if own is None else own),
                         None if parallel is None else bool(parallel),
                         tuple(destination(r.tool_name, r.target.name, r.target.label)
                               for r in routes.values() if not r.handoff.returns
                               and r.target.enabled and r.handoff.enabled is not False))

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
        route = (routes.get(choice) or routes.get(Handoff.default_tool_name(choice))
                 or routes.get(Handoff.default_ask_name(choice)))
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
               if r.tool_name in (Handoff.default_tool_name(r.target.name),
                                  Handoff.default_ask_name(r.target.name)))]
    raise TeamError(
        f"Agent {agent.name!r} has tool_choice={choice!r}, which names no tool or handoff "
        f"of that agent{hint}; tool_choice must be one of: {', '.join(names)}.")


def _prompts(given: Iterable[str]) -> tuple[str, ...]:
    """`Team(suggested_prompts=...)` checked: texts a user could send as they are."""
    if isinstance(given, str):
        raise TeamError("Team(suggested_prompts=...) takes a list of texts, not one text: "
                        f"write [{given!r}].")
    prompts = tuple(given)
    for p in prompts:
        if not isinstance(p, str) or not p.strip():
            raise TeamError("Each of Team(suggested_prompts=...) is a message a user could "
                            f"send, a non-empty text; got {p!r}.")
    return prompts


def _mid(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)


def _default_name(h: Handoff) -> str:
    """The tool name of a route that names none: `ask_<target>` for a delegation,
    `transfer_to_<target>` for a one-way route."""
    target = h.target_name
    return Handoff.default_ask_name(target) if h.returns else Handoff.default_tool_name(target)
