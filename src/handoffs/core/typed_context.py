"""A team's typed session context (`Team(context_type=...)`): a pydantic model the session
keeps, validated for every turn, handed to tools as `ctx.context`, and what of it a
customer may see (`Team(context_public=...)`).

The session stores the context as its JSON dump (`SessionState.context`); a turn works on
a model instance validated from it and writes a new dump only when the turn ends without
failing (`runtime.state.context`), so a failed or interrupted turn changes nothing.
Pydantic is imported by the caller's model, never here: these functions only call the
model class's own methods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import HandoffsError, TeamError

Projection = Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""A callable `context_public`: given context fields (all of them for a session view, the
changed ones for a `context_changed` event), what of them a customer may see."""

_MISSING: Any = object()


def check_type(context_type: Any) -> None:
    """`Team(context_type=...)` must be a pydantic model class whose fields all default."""
    if not (isinstance(context_type, type) and hasattr(context_type, "model_validate")
            and hasattr(context_type, "model_fields")):
        raise TeamError("Team(context_type=...) takes a pydantic model class (a subclass of "
                        f"pydantic.BaseModel), not {context_type!r}.")
    required = [n for n, f in context_type.model_fields.items() if f.is_required()]
    if required:
        raise TeamError(
            f"Team(context_type={context_type.__name__}): every field needs a default, since "
            f"a new session starts from {context_type.__name__}(); give "
            f"{', '.join(required)} one (e.g. `= None`).")


def check_public(context_type: Any, public: Iterable[str] | Projection
                 ) -> tuple[str, ...] | Projection:
    """`Team(context_public=...)` as kept: field names of the context type (checked), or a
    projection callable."""
    if callable(public):
        return public
    if isinstance(public, str):
        public = (public,)
    names = tuple(public)
    if not names:
        return names
    if context_type is None:
        raise TeamError("Team(context_public=...) needs Team(context_type=...): it names "
                        "fields of the session's typed context.")
    unknown = [n for n in names if n not in context_type.model_fields]
    if unknown:
        raise TeamError(f"Team(context_public=...) names {', '.join(map(repr, unknown))}, "
                        f"which {context_type.__name__} has no field for; it has "
                        f"{', '.join(context_type.model_fields)}.")
    return names


def opened(context_type: Any, stored: Mapping[str, Any] | None, given: Any) -> Any:
    """The context a turn works on: the stored one validated (a session that has one),
    else the caller's (`runner.run(context=...)`: an instance or a dict) or a new
    `context_type()`. An instance is copied: the caller's own object is never changed."""
    if stored is not None:
        try:
            return context_type.model_validate(stored)
        except Exception as exc:
            raise HandoffsError(
                f"The session's stored context does not fit {context_type.__name__} "
                f"any more ({exc}); give the new fields defaults, or migrate the stored "
                "sessions.", code="invalid_context") from exc
    if given is None:
        return context_type()
    if isinstance(given, context_type):
        return given.model_copy(deep=True)
    if isinstance(given, Mapping):
        try:
            return context_type.model_validate(dict(given))
        except Exception as exc:
            raise HandoffsError(f"The context given to a new session is not a valid "
                                f"{context_type.__name__}: {exc}",
                                code="invalid_argument") from exc
    raise HandoffsError(f"This team's session context is a {context_type.__name__}; pass "
                        f"one (or a dict of its fields) as context=, not "
                        f"{type(given).__name__}.", code="invalid_argument")


def dumped(context: Any) -> dict[str, Any]:
    """The context as the session stores it (JSON values)."""
    d: dict[str, Any] = context.model_dump(mode="json")
    return d


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of `after` whose values differ from `before`'s."""
    return {k: v for k, v in after.items() if before.get(k, _MISSING) != v}


def public(projection: tuple[str, ...] | Projection, fields: Mapping[str, Any]
           ) -> dict[str, Any]:
    """What a customer may see of these context fields (`Team.context_public`)."""
    if callable(projection):
        return dict(projection(fields))
    return {k: fields[k] for k in projection if k in fields}


def current(context_type: Any, stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A session's context fields as shown: the stored ones, a new context's for a session
    no turn has run in yet, None for a team without a context type."""
    if context_type is None:
        return None
    return dict(stored) if stored is not None else dumped(context_type())
