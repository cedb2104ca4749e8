"""One-shot model calls: `ctx.ask(agent, text, output_type=...)` inside a run (an agent
as a guardrail's classifier, say) and `runner.ask(...)` outside one.

No session, no turn, no transcript: the agent's instructions, the text as the one user
message, and the answer, parsed into `output_type` (a pydantic model; the agent's own
`output_type` when none is given; else the text). The call goes through the executor
like any model call (an activity under Temporal: the worker resolves the agent's model
by its name, so the agent must be one of the team's or declared by the guardrail that
asks it, `guardrail(asks=...)`; the output type travels with the call). In
a run, its tokens count in the turn's usage (under the asked agent's name) and a traced
turn traces it; its text never streams to the turn's reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.messages import AssistantMessage, Message, Note, UserMessage
from ...core.output import OUTPUT_ATTEMPTS, output_feedback, output_spec, parse_output
from ...core.usage import Usage
from ...errors import HandoffsError
from ...models.base import NO_SETTINGS, Model, ModelRequest, ModelResponse
from .executor import UNSTREAMED

if TYPE_CHECKING:
    from ...core.agent import Agent
    from ..state import Turn
    from ..state.host import Executor, Host


async def ask(runner: Host, t: Turn | None, agent: Agent, text: str,
              output_type: Any = None) -> Any:
    """The agent's answer to `text` in one model call (a few when an answer does not
    parse: the model is told what was wrong, `OUTPUT_ATTEMPTS` in all): the
    `output_type` object, else the text. `t`: the turn it is part of (None: none)."""
    if not isinstance(text, str):
        raise HandoffsError(f"ask: the text must be a string, not {type(text).__name__}.",
                            code="invalid_argument")
    kind = output_type if output_type is not None else agent.output_type
    spec = output_spec(kind, agent.name) if kind is not None else None
    model = _model_of(runner, t, agent)
    instructions = agent.instructions
    system = instructions if isinstance(instructions, str) else ""
    settings = agent.model_settings or NO_SETTINGS
    fx: Executor = runner.executor
    messages: list[Message] = [UserMessage(text, agent.name)]
    problems: str | None = None
    for _ in range(OUTPUT_ATTEMPTS):
        request = ModelRequest(agent.name, system, messages, (), settings=settings,
                               output=spec)
        response: ModelResponse = await fx.model(UNSTREAMED, model, request)
        if t is not None:
            _count(t, agent.name, response, model)
        if spec is None:
            return response.text
        value, problems = parse_output(spec, response.text)
        if problems is None:
            return value
        messages = [*messages, AssistantMessage(response.text, agent.name),
                    Note(output_feedback(spec, problems), agent.name, to_model=True)]
    raise HandoffsError(
        f"ask: {agent.name!r} did not answer with a valid {kind.__name__} in "
        f"{OUTPUT_ATTEMPTS} tries ({problems}).", code="invalid_output")


def _model_of(runner: Host, t: Turn | None, agent: Agent) -> Model:
    """The team's model for a team member by that name (traced with its turn, recorded
    by eval), else the agent's own (or the runner's default)."""
    model: Model | None
    if agent.name in runner.team:
        model = (t.models if t is not None else runner.agent_models)[agent.name]
    else:
        from ..settings import resolve_model

        model = resolve_model(agent, getattr(runner, "model", None))
    if model is None:
        raise HandoffsError(f"ask: {agent.name!r} has no model to ask (a person or a remote "
                            "agent cannot answer a one-shot call).", code="no_model")
    return model


def _count(t: Turn, name: str, response: ModelResponse, model: Model) -> None:
    """Add the call's tokens to the turn's, per model and under the asked agent's name."""
    usage = response.usage
    if usage is None:
        return
    from ..decisions.response import model_name

    t.usage.add(usage)
    for key, table in ((response.model or model_name(model), t.usage_by_model),
                       (name, t.usage_by_agent)):
        per = table.get(key)
        if per is None:
            per = table[key] = Usage()
        per.add(usage)
