"""Agent: a frozen description of one member of a team. It has no behaviour of its own;
the runner gives it life."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..errors import HandoffsError
from .context import RunContext
from .handoff import Handoff
from .tools import Tool

Instructions = str | Callable[[RunContext], Any]
"""Text, or a (sync or async) callable that returns the text for the current run."""


@dataclass(slots=True, frozen=True)
class Agent:
    """One member of a team: who it is, what it may use, and where it may hand off."""

    name: str
    """Unique within a team; used in tool names, records, events and sessions."""
    instructions: Instructions = ""
    """The system text, or a callable `ctx -> str` (sync or async) computed per model call."""
    description: str = ""
    """What this agent is for; the default description of handoff tools that target it."""
    tools: Sequence[Tool] = ()
    handoffs: Sequence[Handoff | Agent | str] = ()
    """Routes this agent may take: `Handoff`s, or agents / names for default routes."""
    model: Any = None
    """A `Model`, a "provider:name" string, or None for the runner's default model."""
    capabilities: Sequence[str] = ()
    """What this agent can do; a route's `requires` is checked against it."""
    channels: Sequence[str] | None = None
    """The channels this agent serves (e.g. "web", "voice"); None: every channel."""
    user_selectable: bool = True
    """Whether the user may pick this agent (`runner.select_agent`)."""
    system_only: bool = False
    """True: only the team's supervisor may hand off to this agent."""
    enabled: bool = True
    """False: every handoff to this agent is refused and its routes are not offered."""
    display_name: str | None = None
    """How a user interface names the agent; None: the name."""
    icon: str | None = None
    """A short symbol (an emoji) a user interface shows beside the agent; None: none."""
    color: str | None = None
    """A CSS colour (`#2563eb`) a user interface gives the agent; None: the UI's choice."""
    input_guardrails: Sequence[Any] = ()
    """Checks on the user's message this agent receives: functions `(ctx, text) ->
    GuardrailResult`, or the built-ins `max_length`, `min_length`, `deny_patterns`,
    `json_output` (all importable from `handoffs`)."""
    output_guardrails: Sequence[Any] = ()
    """Checks on the final answer this agent produces."""
    timeout: float | None = None
    """Seconds one activation of this agent may take; None: no limit of its own."""
    tool_choice: str | None = None
    """`auto`, `required`, `none`, or the name of one tool or handoff tool; None: auto."""
    reset_tool_choice: bool = True
    """True: once this agent has made the call a forcing `tool_choice` asks for, its later
    requests in the same turn use `auto` (also when control comes back to it), so it can
    answer in text. False: every request of the agent is forced."""
    model_settings: Mapping[str, Any] | None = None
    """Provider settings for this agent's requests (temperature, max_tokens, ...), passed
    through as `ModelRequest.settings`; they override the model adapter's own."""
    mcp: Sequence[Any] = ()
    """`MCPServer.stdio(...)` / `MCPServer.http(...)`: servers whose tools this agent may
    call, listed when the agent first needs them (connections shared by the runner)."""
    parallel_tool_calls: bool | None = None
    """None (default): when the agent's only tools are one-way handoffs, its provider is
    told to make one tool call per response (only one transfer per response can be made);
    otherwise, tools of its own included, the provider's default (parallel calls save
    round trips, and a second transfer in one response is refused: `multiple_handoffs`).
    True: never turned off. False: always off."""
    handoff_instructions: bool | str | None = None
    """What this agent's system text says about handing off, when it has routes: None
    (default) follows `Team(handoff_instructions=...)` (on by default); True the default
    text; a string that text instead; False nothing."""
    output_type: Any = None
    """A pydantic model class: the agent answers with such an object (the provider's
    JSON-schema mode, or a `final_output` tool), validated by the runner; invalid answers
    go back to the model. `RunResult.output_data` holds the instance, `output` its JSON.
    None: the agent answers in text."""
    routing: Literal["tools", "choice", "calibrated"] | None = None
    """How the agent's model decides who handles a user's message. `tools`: one-way
    routes are `transfer_to_<agent>` tools the model may call at any step. `choice`: when
    the agent receives a user message, its model first makes one constrained choice
    ("you, or billing, or technical?" as JSON whose `route` can only be one of them, by the
    provider's structured output) and the runtime makes the handoff it names; the agent's
    own steps are then offered no one-way transfer tools (delegations stay tools). Whether
    a model routes better this way is for `handoffs eval --routing` to say; on
    Qwen2.5-Coder-0.5B it did not (`docs/guides/routing.md`). `calibrated`: the same
    choice, read from the model's token probabilities and divided by what it chooses with
    no message at all (a small model's leaning towards one option, often the first
    listed, taken out; for providers that report token probabilities: OpenAI, Gemini,
    llama.cpp's server; the plain choice elsewhere): on Qwen2.5-Coder-0.5B the first
    routing decision went from 40% to 66% right. None (default): the team's
    `Team(routing=...)`, which is `tools`."""
    accept_truncated: bool = False
    """What an answer cut short by the output limit (the provider's `max_tokens`) does.
    False (default): it is not delivered; the agent is told so and asked once more for a
    shorter answer, and a second cut answer fails it with `output_truncated` (the team's
    fallback applies). True: the cut text is delivered as it is. Either way an
    `answer_truncated` event says so."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise HandoffsError("An agent needs a non-empty name.", code="invalid_team")
        # Accept any sequence from the caller but store tuples: agents are frozen values.
        for attr in ("tools", "handoffs", "capabilities", "input_guardrails",
                     "output_guardrails", "mcp"):
            value = getattr(self, attr)
            if not isinstance(value, tuple):
                object.__setattr__(self, attr, tuple(value))
        if self.channels is not None and not isinstance(self.channels, tuple):
            object.__setattr__(self, "channels", tuple(self.channels))
        if self.mcp:
            from ..mcp.servers import MCPServer

            for s in self.mcp:
                if not isinstance(s, MCPServer):
                    raise HandoffsError(
                        f"Agent {self.name!r}: mcp takes MCPServer.stdio(...) or "
                        f"MCPServer.http(...) values, got {s!r}.", code="invalid_team")
        if self.routing not in (None, "tools", "choice", "calibrated"):
            raise HandoffsError(f"Agent {self.name!r}: routing must be 'tools', 'choice' "
                                f"or 'calibrated', not {self.routing!r}.", code="invalid_team")
        for t in self.tools:
            if not isinstance(t, Tool):
                raise HandoffsError(
                    f"Agent {self.name!r}: tools must be Tool objects (decorate the "
                    f"function with @tool), got {t!r}.",
                    code="invalid_team",
                )

    @property
    def label(self) -> str:
        """The name to show people: `display_name`, else `name`."""
        return self.display_name or self.name

    # Class attributes, not properties: the runtime reads them at every step.
    is_human: ClassVar[bool] = False
    """True for a `HumanAgent` (a person, no model)."""
    is_remote: ClassVar[bool] = False
    """True for a `RemoteAgent` (reached over A2A, no model here)."""


@dataclass(slots=True, frozen=True)
class HumanAgent(Agent):
    """A team member with no model: a person (an operator) who answers in the session.

    A handoff to a human ends the turn with status WAITING_FOR_HUMAN; the operator
    answers with `runner.reply_as_human(...)`.
    """

    user_selectable: bool = False
    """Whether the user may pick the person (`runner.select_agent`, the page's picker):
    not unless the team says so with `HumanAgent(..., user_selectable=True)`; users
    reach a person through an agent's escalation route."""

    is_human: ClassVar[bool] = True
    """Always True: a person answers (`runner.reply_as_human`), not a model."""
