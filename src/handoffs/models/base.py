"""The `Model` protocol: one request in, one response out (or a stream of pieces).

A request carries the agent's system text, its view of the neutral transcript and the
tools it may call; adapters turn that into a provider's wire format and back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from ..core.messages import Message, Reasoning, ToolCall
from ..core.output import OutputSpec
from ..core.tools import ToolSpec
from ..core.usage import Usage as Usage  # defined in core (records carry it); public here


@dataclass(slots=True)
class ModelRequest:
    """What an agent's model is asked: who is asking, the system text, the history, tools."""

    agent: str
    system: str
    messages: Sequence[Message]
    """The agent's view of the transcript (a `Window`: read it, don't keep mutating it)."""
    tools: Sequence[ToolSpec]
    tool_choice: str | None = None
    """`auto`, `required`, `none`, a tool name, or None (the provider's default)."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Provider settings passed through (temperature, max_tokens, ...)."""
    output: OutputSpec | None = None
    """The object the answer must be (`Agent.output_type`): adapters ask for it in their
    provider's form; None: a text answer."""
    parallel_tool_calls: bool | None = None
    """False: the provider is told to make at most one tool call per response (OpenAI
    `parallel_tool_calls`, Anthropic `disable_parallel_tool_use`); the runner sends it
    when one-way handoff routes are offered. None: the provider's default."""
    shared: Mapping[str, Any] = field(default_factory=dict)
    """The session's shared memory as the call is made (`ctx.shared`), for a model that
    plays the team offline (`RuleModel` templates read `{shared[key]}`); provider adapters
    never send it."""
    context: Any = None
    """The run's context (`ctx.context`), likewise (`{context.seat_number}`); None when
    there is none."""
    logprobs: int | None = None
    """How many of the likeliest tokens to report at each position of the answer
    (`ModelResponse.logprobs`), where the provider reports them (OpenAI's Chat Completions
    `top_logprobs`, llama.cpp's server); None (default): none asked. The calibrated
    routing choice asks for them (`Agent(routing="calibrated")`)."""


NO_SETTINGS: Mapping[str, Any] = MappingProxyType({})
"""The shared, read-only empty `settings` the runner passes (no dict built per request)."""


@dataclass(slots=True)
class ModelResponse:
    """A model's answer: text, tool calls (in the order made), and what it cost."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    model: str | None = None
    """The provider's name for the model that answered, when known."""
    reasoning: tuple[Reasoning, ...] = ()
    """The provider's own reasoning state, to keep on the transcript's assistant message
    (`AssistantMessage.reasoning`) so its adapter can send it back."""
    stop: str | None = None
    """Why the model stopped, in the library's words: `end` (it finished), `tool_calls`,
    `length` (the output limit cut it: the answer is truncated), `content_filter`,
    `refusal`; None when the adapter does not say."""
    logprobs: tuple[TokenLogprobs, ...] = ()
    """The answer's tokens with the likeliest alternatives at each, when the request asked
    (`ModelRequest.logprobs`) and the provider reports them; empty otherwise."""


class TokenLogprobs:
    """One token of an answer as the provider reports it: its text, its log probability,
    and the likeliest tokens at its position (text, log probability), best first. (A
    plain slotted class: a dataclass costs more to import.)"""

    __slots__ = ("logprob", "token", "top")

    def __init__(self, token: str, logprob: float,
                 top: tuple[tuple[str, float], ...] = ()) -> None:
        self.token = token
        self.logprob = logprob
        self.top = top

    def __repr__(self) -> str:
        return f"TokenLogprobs({self.token!r}, {self.logprob!r}, {self.top!r})"


@dataclass(slots=True)
class TextDelta:
    """A piece of streamed text; `Model.stream` yields these, then the `ModelResponse`."""

    text: str


def chunked(response: ModelResponse, size: int | None) -> Iterator[TextDelta | ModelResponse]:
    """A whole response as a stream: its text in `size`-character deltas (none when
    `size` is falsy), then the response; for models that answer at once (offline ones)."""
    if size:
        text = response.text
        for i in range(0, len(text), size):
            yield TextDelta(text[i:i + size])
    yield response


@runtime_checkable
class Model(Protocol):
    """Anything that can answer a `ModelRequest`.

    `complete` returns the whole response. `stream` yields `TextDelta`s as text arrives
    and then exactly one `ModelResponse` holding the whole text and every tool call.
    Errors are raised as exceptions; provider adapters raise `ModelError` with a code.
    """

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One model call: the whole response to `request`. A failure raises `ModelError`
        with a stable code (`rate_limited`, `auth_error`, `timeout`, ...)."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """The same call streamed: `TextDelta`s as the text comes, then the whole
        `ModelResponse` last (an async generator)."""
        ...
