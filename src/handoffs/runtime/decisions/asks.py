"""Reading a model's handoff requests: arguments parsed once, payloads validated."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...core.handoff import HandoffReason
from ...core.handoff_tool import OWN_ARGUMENTS, split_arguments
from ...core.messages import ToolCall
from ...core.team import Route
from ...core.tools import HandoffTo, validate_json

if TYPE_CHECKING:
    import pydantic


class HandoffAsk:
    """One handoff request of a response, in call order; arguments parsed once."""

    __slots__ = ("_payload", "args", "call", "explanation", "ignored", "index", "problem",
                 "programmatic", "reason", "returns", "route", "target")

    def __init__(self, index: int, call: ToolCall, target: str, route: Route | None,
                 reason: HandoffReason, programmatic: HandoffTo | None = None) -> None:
        self.index = index
        self.call = call
        self.target = target
        self.route = route
        self.returns = route is not None and route.handoff.returns
        """A delegation (the route returns control): not the response's one transfer."""
        self.reason = reason
        self.programmatic = programmatic
        self.ignored: list[str] = []
        """Argument keys neither the tool nor its payload schema names (not refused)."""
        self._payload: tuple[Any, str | None] | None = None
        if programmatic is not None:
            self.args: dict[str, Any] = {}
            self.problem: str | None = None
            self.explanation = programmatic.reason
        else:
            self.args, self.problem = parse_arguments(call.arguments)
            reason_text = self.args.get("reason", "")
            self.explanation = reason_text if isinstance(reason_text, str) else str(reason_text)

    def payload_of(self) -> tuple[Any, str | None]:
        """The validated payload (or None) and the validation problem (or None).

        A model's payload is validated in pydantic's strict mode on JSON input (`"25"`
        is not an `int`; dates and enums are read from their JSON strings); a
        programmatic one (`HandoffTo`) as Python. Keys neither the tool nor the payload
        schema names are ignored (listed in `ignored`), unless the schema forbids extras:
        a handoff is refused only for what would do harm."""
        done = self._payload
        if done is None:
            done = self._payload = self._read_payload()
        return done

    def _read_payload(self) -> tuple[Any, str | None]:
        model = self.route.handoff.payload if self.route is not None else None
        raw: Any
        if self.programmatic is not None:
            raw = self.programmatic.payload
            if model is None or isinstance(raw, model):
                return raw, None
        else:
            if self.problem is not None:
                return None, self.problem
            route = self.route
            shape = route.shape if route is not None else "none"
            if model is None:
                self.ignored = [k for k in self.args if k not in OWN_ARGUMENTS]
                return None, None
            fields = model.model_fields
            known = frozenset((*fields, *(f.alias for f in fields.values() if f.alias)))
            raw, self.ignored = split_arguments(self.args, shape, known)
            return _strict_payload(model, {} if raw is None else raw, self)
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                return None, "payload: must be a JSON object."
            except RecursionError:
                return None, "payload: nested too deeply to read."
        try:
            return model.model_validate(raw), None
        except validation_error() as exc:
            return None, error_text(exc) + "."
        except RecursionError:
            return None, "payload: nested too deeply to validate."


def _strict_payload(model: type[pydantic.BaseModel], raw: Any, ask: HandoffAsk
                    ) -> tuple[Any, str | None]:
    """A model's payload (a JSON object, or its text) validated strictly as JSON; keys
    the schema does not name are dropped and listed on `ask.ignored`, unless the schema
    forbids extras."""
    try:
        text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        data = json.loads(text) if isinstance(raw, str) else raw
    except ValueError:
        return None, "payload: must be a JSON object."
    except RecursionError:
        return None, "payload: nested too deeply to read."
    if type(data) is not dict:
        return None, "payload: must be a JSON object of the payload schema."
    if model.model_config.get("extra") in (None, "ignore"):
        fields = model.model_fields
        known = {*fields, *(f.alias for f in fields.values() if f.alias)}
        unknown = [k for k in data if k not in known]
        if unknown:
            ask.ignored = [*ask.ignored, *unknown]
            data = {k: v for k, v in data.items() if k in known}
            text = json.dumps(data, ensure_ascii=False)
    try:
        return validate_json(model, text), None
    except validation_error() as exc:
        if any("recursion limit" in e["msg"] for e in exc.errors()):
            return None, "payload: nested too deeply to validate."
        return None, error_text(exc) + "."
    except RecursionError:
        return None, "payload: nested too deeply to validate."


_DECODER = json.JSONDecoder()
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]

TOO_DEEP = ("The arguments are nested too deeply to read. Send a flatter JSON object "
            "matching the tool's schema.")


def parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """A model's argument text as a dict, or the problem to tell the model about."""
    if not text or text.isspace():
        return {}, None
    stripped = text.lstrip()
    try:
        # The decoder's scanner, without json.loads' wrappers (raw_decode's only turns a
        # StopIteration into the error): this runs once per tool or handoff call.
        value, end = _SCAN(stripped, 0)
    except StopIteration as exc:
        return {}, (f"The arguments are not valid JSON (Expecting value at position "
                    f"{exc.value}). Send a JSON object matching the tool's schema.")
    except json.JSONDecodeError as exc:
        return {}, (f"The arguments are not valid JSON ({exc.msg} at position {exc.pos}). "
                    "Send a JSON object matching the tool's schema.")
    except ValueError as exc:  # e.g. numbers too long to convert
        return {}, f"The arguments could not be read as JSON ({exc})."
    except RecursionError:
        return {}, TOO_DEEP
    if type(value) is not dict:
        return {}, "The arguments must be a JSON object matching the tool's schema."
    if end < len(stripped) and stripped[end:].strip():
        return {}, ("The arguments have extra text after the JSON object. Send exactly one "
                    "JSON object matching the tool's schema.")
    return value, None


def validation_error() -> type[pydantic.ValidationError]:
    """pydantic's ValidationError, imported when first needed (a tool or payload exists)."""
    import pydantic

    return pydantic.ValidationError


def error_text(exc: pydantic.ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(x) for x in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()[:8]
    )


def payload_json(payload: Any) -> Any:
    if payload is None:
        return None
    dump = getattr(payload, "model_dump", None)
    if dump is not None and not isinstance(payload, type):
        return dump(mode="json")
    return payload
