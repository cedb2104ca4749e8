"""`get_model("provider:name")`: model strings resolved to adapters, SDKs imported lazily."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import HandoffsError
from .base import Model

_PROVIDERS: dict[str, Callable[[str], Model]] = {}


def register_provider(prefix: str, factory: Callable[[str], Model]) -> None:
    """Make `get_model("<prefix>:<name>")` call `factory(name)`."""
    _PROVIDERS[prefix] = factory


def get_model(spec: str, **options: Any) -> Model:
    """The model a "provider:name" string names.

    Known providers: `openai:<model>` (honours OPENAI_BASE_URL for compatible servers),
    `anthropic:<model>`, `ollama:<model>` (OpenAI protocol at localhost:11434), and any
    registered with `register_provider`.
    """
    provider, sep, name = spec.partition(":")
    if not sep or not name:
        raise HandoffsError(
            f"Model {spec!r} must look like 'provider:name', e.g. 'openai:gpt-4.1-mini' or "
            "'anthropic:claude-sonnet-4-5'.",
            code="invalid_model",
        )
    factory = _PROVIDERS.get(provider)
    if factory is not None:
        return factory(name)
    builtin = _builtin(provider)
    if builtin is None:
        known = ", ".join(sorted({"openai", "anthropic", "ollama", *_PROVIDERS}))
        raise HandoffsError(f"Unknown model provider {provider!r} in {spec!r}; known: {known}.",
                            code="invalid_model")
    return builtin(name, **options)


def _builtin(provider: str) -> Callable[..., Model] | None:
    if provider in ("openai", "ollama"):
        try:
            from . import openai as openai_adapter  # type: ignore[attr-defined, unused-ignore]
        except ImportError:
            return None
        factory: Callable[..., Model] = getattr(openai_adapter, f"{provider}_model", None) \
            or _missing(provider)
        return factory
    if provider == "anthropic":
        try:
            from . import anthropic as anthropic_adapter  # type: ignore[attr-defined, unused-ignore]
        except ImportError:
            return None
        factory = getattr(anthropic_adapter, "anthropic_model", None) or _missing(provider)
        return factory
    return None


def _missing(provider: str) -> Callable[..., Model]:
    def fail(name: str, **options: Any) -> Model:
        raise HandoffsError(f"The {provider} adapter is not available in this version.",
                            code="invalid_model")

    return fail
