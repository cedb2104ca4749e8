"""Structured output: an agent that must answer with a typed object.

`Agent(output_type=Invoice)` (a pydantic model) makes the agent's answer that object: the
request carries the object's JSON schema (`ModelRequest.output`), each adapter asks its
provider in its own form (OpenAI: `response_format` JSON schema, strict where the schema
allows it; Anthropic: a `final_output` tool the model must call), and the runtime
validates the answer. An answer that does not validate is shown to the model with the
errors, and the agent tries again (at most `OUTPUT_ATTEMPTS` times in one activation, then
the agent fails with `invalid_output`). `RunResult.output_data` is the validated
instance, `RunResult.output` its JSON.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import TeamError
from .names import tool_name

OUTPUT_ATTEMPTS = 3
"""Invalid answers an agent may give in one activation before it fails (`invalid_output`)."""

FINAL_OUTPUT_TOOL = "final_output"
"""The tool name adapters without a JSON-schema mode (Anthropic) offer for the answer."""

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.S)


@dataclass(slots=True, frozen=True)
class OutputSpec:
    """What a provider is told about an agent's output type (built once per agent)."""

    name: str
    """A provider-safe name for the type (`^[a-zA-Z0-9_-]{1,64}$`)."""
    schema: dict[str, Any]
    """The JSON schema of the object, every object in it closed (no extra keys)."""
    strict: bool
    """Whether the schema meets strict mode's rules (every property required)."""
    type: Any = field(repr=False, compare=False)
    """The pydantic model the answer is validated against."""


def output_spec(output_type: Any, agent: str) -> OutputSpec:
    """The spec of `output_type`; `TeamError` if it is not a pydantic model."""
    import pydantic

    if not (isinstance(output_type, type) and issubclass(output_type, pydantic.BaseModel)):
        raise TeamError(
            f"Agent {agent!r}: output_type must be a pydantic model class (a subclass of "
            f"pydantic.BaseModel), got {output_type!r}.")
    from ..models.strict import strict_compatible

    schema = _closed(copy.deepcopy(output_type.model_json_schema()))
    return OutputSpec(tool_name(output_type.__name__), schema, strict_compatible(schema),
                      output_type)


def parse_output(spec: OutputSpec, text: str) -> tuple[Any, str | None]:
    """(the validated object, None), or (None, what is wrong, in words for the model)."""
    import pydantic

    try:
        return spec.type.model_validate_json(unfenced(text)), None
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(the object)'}: {e['msg']}"
            for e in exc.errors(include_url=False)[:10])
        return None, problems


def unfenced(text: str) -> str:
    """A JSON answer's text without the Markdown code fence a model may put around it."""
    m = _FENCE.match(text)
    return m.group(1) if m else text.strip()


def output_json(value: Any) -> str:
    """The JSON text of a validated object (what `RunResult.output` holds)."""
    text: str = value.model_dump_json()
    return text


def output_feedback(spec: OutputSpec, problems: str) -> str:
    """What the model is told when its answer is not a valid object."""
    return (f"Your answer must be a JSON object of type {spec.name} matching this schema: "
            f"{json.dumps(spec.schema, separators=(',', ':'))}. It was not valid: "
            f"{problems}. Answer again with only the JSON object (through the "
            f"{FINAL_OUTPUT_TOOL} tool where it is offered).")


def _closed(node: Any) -> Any:
    """The schema with every object closed (`additionalProperties: false`)."""
    if isinstance(node, list):
        return [_closed(n) for n in node]
    if not isinstance(node, dict):
        return node
    for key, value in list(node.items()):
        if key == "properties" and isinstance(value, dict):
            node[key] = {k: _closed(v) for k, v in value.items()}
        elif isinstance(value, dict | list):
            node[key] = _closed(value)
    if node.get("type") == "object" and "properties" in node:
        node.setdefault("additionalProperties", False)
    return node
