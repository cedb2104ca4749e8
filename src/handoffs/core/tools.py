"""Tools: plain Python functions a model may call, with a JSON schema from type hints.

`@tool` builds the schema once, at decoration time, with pydantic; a call validates the
model's arguments against it and reports problems back to the model as feedback.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

from ..errors import HandoffsError
from .context import RunContext
from .names import tool_name as safe_tool_name

if TYPE_CHECKING:
    import pydantic

ToolErrorMode = Literal["feedback", "raise", "escalate"]


@dataclass(slots=True, frozen=True)
class HandoffTo:
    """Returned by a tool (or code) to hand the conversation off programmatically.

    The request follows the same routes and policy as a model's `transfer_to_*` call:
    the target must be declared by the current agent, and the rules apply.
    """

    target: str
    reason: str = ""
    payload: Any = None
    """An instance of the route's payload model, or a dict to validate against it."""


@dataclass(slots=True, frozen=True)
class ToolSpec:
    """What a model is told about one tool: the name, what it does, its JSON schema."""

    name: str
    """The name the model calls, valid for every provider (`^[a-zA-Z0-9_-]{1,64}$`)."""
    description: str
    """What the tool does, in words the model reads to decide when to call it."""
    parameters: dict[str, Any]
    """The JSON schema of the arguments object."""
    read_only: bool = False
    """True when a call only reads (`Tool.read_only`): the offline model calls such a
    tool on a guess, and never one that changes something. Not sent to providers."""


@dataclass(slots=True, frozen=True)
class Tool:
    """A callable a model may use. Build one with `@tool`, or directly."""

    name: str
    description: str
    parameters: dict[str, Any]
    """JSON schema (an object) of the arguments."""
    fn: Callable[..., Any]
    takes_context: bool = False
    """True when the function's first parameter is a `RunContext`."""
    is_async: bool = False
    on_error: ToolErrorMode = "feedback"
    """What an exception in the tool does: `feedback` (default) gives the error text back
    to the model as the call's result; `raise` fails the run; `escalate` hands off to the
    team's fallback agent (error recovery)."""
    needs_approval: bool | Callable[..., Any] = False
    """True: a call waits for a person's decision (`runner.approve` / `runner.reject`)
    before it runs; a callable `(ctx, arguments) -> bool` (sync or async) decides per
    call. The turn pauses with status `waiting_for_approval`, durably."""
    args_model: type[pydantic.BaseModel] | None = field(default=None, repr=False)
    """Validates and converts arguments; None means arguments are passed unvalidated."""
    timeout: float | None = None
    """Seconds one attempt may take (None: no limit of its own). Over it the attempt fails
    with `TimeoutError`, as if the tool had raised it. In process an async tool is
    cancelled there (a sync one blocks the event loop and cannot be); under Temporal it is
    the tool activity's start-to-close timeout."""
    retry: int = 0
    """How many more times a failed attempt (an exception, or the timeout) is tried before
    the failure counts (feedback, raise or escalate, as `on_error` says). Only for tools
    that are safe to run again: an attempt that failed may have done part of its work."""
    read_only: bool = False
    """True: a call only looks something up and changes nothing (`@tool(read_only=True)`).
    The offline model (`RuleModel` with no rule that applies) calls a read-only tool the
    message names, and answers with a placeholder naming any other tool instead of
    calling it on a keyword guess. False (default): the call may have effects."""

    @property
    def spec(self) -> ToolSpec:
        """What a model is shown of the tool: its name, description and JSON schema."""
        return ToolSpec(self.name, self.description, self.parameters, self.read_only)

    def parse(self, arguments: dict[str, Any] | str) -> dict[str, Any]:
        """Validate the model's arguments (its JSON text, or that text read as a dict).

        Validation is pydantic's strict mode on JSON input: `"25"` is not an `int` unless
        the type says so, while dates, enums and the like are read from their JSON
        strings; keys the schema does not name are refused. Raises
        `pydantic.ValidationError` when they do not fit, including when they are nested
        too deeply to validate (never `RecursionError`)."""
        model = self.args_model
        if model is None:
            return arguments if isinstance(arguments, dict) else json.loads(arguments or "{}")
        text = arguments if isinstance(arguments, str) else json.dumps(arguments,
                                                                        ensure_ascii=False)
        try:
            validated = validate_json(model, text)
        except RecursionError:
            raise _too_deep(self.name) from None
        except _validation_error() as exc:
            if any("recursion limit" in e["msg"] for e in exc.errors()):
                raise _too_deep(self.name) from None  # the JSON reader's own limit
            raise
        return {name: getattr(validated, name) for name in type(validated).model_fields}

    async def invoke(self, ctx: RunContext, arguments: dict[str, Any]) -> Any:
        """Call the function with already validated arguments."""
        args = (ctx,) if self.takes_context else ()
        if self.is_async:
            return await self.fn(*args, **arguments)
        return self.fn(*args, **arguments)


CONTEXT_NAMES = ("ctx", "context")
"""Parameter names that say "the run context": such a parameter must be annotated
`RunContext` (and come first), or the model would be asked to fill it in."""


def context_problem(t: Tool) -> str | None:
    """What is wrong with how `t`'s function asks for the run context, or None.

    The context is injected into the first parameter when it is annotated `RunContext`
    (or `RunContext[T]`).
    A parameter named `ctx` or `context` with no annotation (or `Any`) is not injected: it
    becomes an argument the model must invent. `RunContext` anywhere but first is not
    injected either. Called once per tool when a `Team` is built.
    """
    try:
        params = list(inspect.signature(t.fn).parameters.values())
        hints = typing.get_type_hints(t.fn)
    except Exception:  # not introspectable (a builtin, a C callable): nothing to check
        return None
    for i, p in enumerate(params):
        hint = hints.get(p.name, p.annotation)
        if is_context_type(hint) or any(map(is_context_type, typing.get_args(hint))):
            if i == 0 and is_context_type(hint) and t.takes_context:
                continue
            return (f"its parameter {p.name!r} is annotated {hint!r}, but the run context "
                    "is only passed to a first parameter annotated exactly `RunContext`. "
                    "Make it the first parameter, annotated RunContext.")
        if p.name in CONTEXT_NAMES and hint in (inspect.Parameter.empty, Any, object):
            return (f"its parameter {p.name!r} is named like the run context but not "
                    "annotated `RunContext`, so the model would be asked to fill it in. "
                    f"Annotate it ({p.name}: RunContext, as the first parameter) or "
                    "rename it.")
    return None


def is_context_type(hint: Any) -> bool:
    """Whether an annotation is `RunContext` or `RunContext[SomeType]`."""
    return hint is RunContext or typing.get_origin(hint) is RunContext


def validate_json(model: type[pydantic.BaseModel], text: str) -> pydantic.BaseModel:
    """`model` from a model's JSON text, in pydantic's strict mode. A lone UTF-16
    surrogate cannot be read as JSON text: it is replaced (U+FFFD), as the stores
    replace it, instead of refusing the call."""
    try:
        return model.model_validate_json(text, strict=True)
    except _validation_error() as exc:
        kinds = {e["type"] for e in exc.errors()}
        if "json_invalid" in kinds and "\\u" in text:  # maybe an escaped lone surrogate
            try:
                text = json.dumps(json.loads(text), ensure_ascii=False)
            except (ValueError, RecursionError):
                raise exc from None
        elif "string_unicode" not in kinds:
            raise
        fixed = _LONE_SURROGATE.sub("\ufffd", text)
        if fixed == text:
            raise
        return model.model_validate_json(fixed, strict=True)


def _validation_error() -> type[pydantic.ValidationError]:
    import pydantic

    return pydantic.ValidationError


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

_ARG_LINE = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and per-argument descriptions."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    summary_lines: list[str] = []
    params: dict[str, str] = {}
    in_args = False
    current: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.lower() in ("args:", "arguments:", "parameters:"):
            in_args = True
            continue
        if in_args:
            if stripped.endswith(":") and not line.startswith((" ", "\t")):
                in_args = False
                continue
            m = _ARG_LINE.match(line)
            if m and line.startswith((" ", "\t")) and not line.startswith(" " * 8):
                current = m.group(1)
                params[current] = m.group(2).strip()
            elif current and stripped:
                params[current] += " " + stripped
            continue
        if stripped.lower() in ("returns:", "raises:", "examples:"):
            break
        summary_lines.append(line)
    return "\n".join(summary_lines).strip(), params


def _build_tool(
    fn: Callable[..., Any],
    name: str | None,
    description: str | None,
    on_error: ToolErrorMode,
) -> Tool:
    import pydantic  # at decoration time only: keeps `import handoffs` light

    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # unresolvable forward references
        raise HandoffsError(
            f"Cannot read the type hints of tool {fn.__name__!r}: {exc}. "
            "Define the types it names before decorating it.",
            code="invalid_tool",
        ) from exc
    summary, arg_docs = _parse_docstring(fn.__doc__)
    params = list(sig.parameters.values())
    takes_context = bool(params) and is_context_type(hints.get(params[0].name))
    if takes_context:
        params = params[1:]
    fields: dict[str, Any] = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise HandoffsError(
                f"Tool {fn.__name__!r} takes *{p.name}; tools need named parameters "
                "so that a JSON schema can describe them.",
                code="invalid_tool",
            )
        annotation = hints.get(p.name, Any)
        if is_context_type(annotation) or any(map(is_context_type, typing.get_args(annotation))):
            annotation = Any  # misplaced: `Team` refuses it and says why (`context_problem`)
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (annotation, pydantic.Field(default, description=arg_docs.get(p.name)))
    # A name the user gives is kept as given (`Team` refuses it if a provider would);
    # a function's name is made valid here (`café` -> `cafe`).
    tool_name = name if name is not None else safe_tool_name(fn.__name__)
    args_model = pydantic.create_model(
        f"{tool_name}_args", __config__=pydantic.ConfigDict(extra="forbid"), **fields
    )
    schema = args_model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False  # extra keys are refused (extra="forbid")
    return Tool(
        name=tool_name,
        description=description or summary or tool_name.replace("_", " "),
        parameters=schema,
        fn=fn,
        takes_context=takes_context,
        is_async=inspect.iscoroutinefunction(fn),
        on_error=on_error,
        args_model=args_model,
    )


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None,
    on_error: ToolErrorMode = "feedback",
    needs_approval: bool | Callable[..., Any] = False,
    timeout: float | None = None, retry: int = 0, read_only: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    on_error: ToolErrorMode = "feedback",
    needs_approval: bool | Callable[..., Any] = False,
    timeout: float | None = None,
    retry: int = 0,
    read_only: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a sync or async function into a `Tool`.

    The JSON schema comes from the type hints; the description from the docstring's
    first paragraph, and each argument's description from its `Args:` section. A first
    parameter annotated `RunContext` receives the run's context and is not shown to the
    model. The function may return `HandoffTo(...)` to hand off programmatically.
    `needs_approval=True` (or a function of the context and the arguments) makes a call
    wait for a person (`runner.approve` / `runner.reject`) before it runs.
    `timeout=` limits each attempt to so many seconds and `retry=` tries a failed attempt
    again so many times (see `Tool.timeout`, `Tool.retry`; under Temporal, the tool
    activity's timeout and attempts). `read_only=True` says a call changes nothing
    (a lookup): the offline model may call it on a guess (see `Tool.read_only`).

        @tool
        def lookup_order(order_id: str) -> dict:
            '''Find an order by id.

            Args:
                order_id: The order number, e.g. "A-1001".
            '''
    """
    if on_error not in ("feedback", "raise", "escalate"):
        raise HandoffsError(
            f"on_error must be 'feedback', 'raise' or 'escalate', not {on_error!r}.",
            code="invalid_tool",
        )
    if fn is not None:
        return _build_tool(fn, name, description, on_error)

    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not timeout > 0):
        raise HandoffsError(f"tool timeout must be a positive number of seconds or None, "
                            f"not {timeout!r}.", code="invalid_tool")
    if isinstance(retry, bool) or not isinstance(retry, int) or retry < 0:
        raise HandoffsError(f"tool retry must be a whole number of attempts, 0 or more, "
                            f"not {retry!r}.", code="invalid_tool")

    def decorate(f: Callable[..., Any]) -> Tool:
        built = _build_tool(f, name, description, on_error)
        if needs_approval is not False or timeout is not None or retry or read_only:
            built = dataclasses.replace(built, needs_approval=needs_approval,
                                        timeout=timeout, retry=retry,
                                        read_only=bool(read_only))
        return built

    return decorate


def render_result(value: Any) -> str:
    """The text a model sees for a tool's return value."""
    if isinstance(value, str):
        return value
    dump = getattr(value, "model_dump_json", None)
    if dump is not None and not isinstance(value, type):
        text: str = dump()
        return text
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        pass
    except RecursionError:
        return f"(a {type(value).__name__} nested too deeply to show)"
    try:
        return str(value)
    except RecursionError:
        return f"(a {type(value).__name__} nested too deeply to show)"


def _too_deep(tool_name: str) -> pydantic.ValidationError:
    import pydantic
    from pydantic_core import InitErrorDetails, PydanticCustomError

    return pydantic.ValidationError.from_exception_data(f"{tool_name} arguments", [
        InitErrorDetails(type=PydanticCustomError(
            "too_deep", "nested too deeply to validate; send flatter arguments"),
            loc=(), input=None)])


