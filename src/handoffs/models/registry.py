"""`get_model("provider:name")`: model strings resolved to adapters, SDKs imported lazily."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import HandoffsError
from .base import Model

_PROVIDERS: dict[str, Callable[..., Model]] = {}
BUILTIN = ("openai", "openai-responses", "anthropic", "gemini", "bedrock", "litellm",
           "ollama", "azure")
"""The providers `get_model` knows without `register_provider`."""


def register_provider(prefix: str, factory: Callable[[str], Model]) -> None:
    """Make `get_model("<prefix>:<name>")` call `factory(name)`."""
    _PROVIDERS[prefix] = factory


def get_model(spec: str, **options: Any) -> Model:
    """The model a "provider:name" string names.

    Known providers: `openai:<model>` (Chat Completions; honours OPENAI_BASE_URL for
    compatible servers), `openai-responses:<model>` (OpenAI's Responses API, stateless),
    `anthropic:<model>`, `gemini:<model>` (google-genai: the Gemini API or Vertex AI),
    `bedrock:<model-id>` (Amazon Bedrock's Converse API), `litellm:<provider/model>`
    (any model LiteLLM reaches), `ollama:<model>` (OpenAI protocol at localhost:11434),
    `azure:<deployment>` (Azure OpenAI: AZURE_OPENAI_ENDPOINT and a key or an Entra ID
    token provider), and any registered with `register_provider`. `options` go to the
    adapter's constructor (for example `timeout`, `max_retries`, `base_url`,
    `settings`); they may also follow the name as a query, so a plain string can carry
    them (`HANDOFFS_MODEL`, the CLI):
    `ollama:qwen2.5:0.5b?text_tool_calls=true&local_max_tokens=512` (`true`/`false`,
    numbers and `none` are read as such).
    """
    spec, _, query = spec.partition("?")
    if query:
        options = {**_query_options(spec, query), **options}
    provider, sep, name = spec.partition(":")
    if not sep or not name:
        raise HandoffsError(
            f"Model {spec!r} must look like 'provider:name', e.g. 'openai:gpt-4.1-mini' or "
            "'anthropic:claude-sonnet-4-6'.",
            code="invalid_model",
        )
    factory = _PROVIDERS.get(provider)
    if factory is not None:
        return factory(name, **options) if options else factory(name)
    builtin = _builtin(provider)
    if builtin is None:
        known = ", ".join(sorted({*BUILTIN, *_PROVIDERS}))
        raise HandoffsError(f"Unknown model provider {provider!r} in {spec!r}; known: {known}.",
                            code="invalid_model")
    factory_fn, adapter = builtin
    _check_options(spec, adapter, options)
    try:
        return factory_fn(name, **options)
    except TypeError as exc:  # an option the adapter does not take
        raise HandoffsError(f"Model {spec!r}: {exc}.", code="invalid_model") from exc


def _query_options(spec: str, query: str) -> dict[str, Any]:
    from urllib.parse import parse_qsl

    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError as exc:
        raise HandoffsError(f"Model {spec!r}: the options after '?' must look like "
                            "key=value&key=value.", code="invalid_model") from exc
    return {key: _value(value) for key, value in pairs}


def _value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _builtin(provider: str) -> tuple[Callable[..., Model], type] | None:
    """The factory of a built-in provider and the adapter class it makes."""
    # The adapter modules import their SDKs only when a model is created, and then fail
    # with the extra to install (pip install 'handoffs[openai]').
    if provider in ("openai", "ollama"):
        from . import openai as openai_adapter

        factory = (openai_adapter.ollama_model if provider == "ollama"
                   else openai_adapter.openai_model)
        return factory, openai_adapter.OpenAIModel
    if provider == "anthropic":
        from . import anthropic as anthropic_adapter

        return anthropic_adapter.anthropic_model, anthropic_adapter.AnthropicModel
    if provider == "openai-responses":
        from . import responses

        return responses.responses_model, responses.ResponsesModel
    if provider == "gemini":
        from . import gemini

        return gemini.gemini_model, gemini.GeminiModel
    if provider == "bedrock":
        from . import bedrock

        return bedrock.bedrock_model, bedrock.BedrockModel
    if provider == "litellm":
        from . import litellm as litellm_adapter

        return litellm_adapter.litellm_model, litellm_adapter.LiteLLMModel
    if provider == "azure":
        from . import azure

        return azure.azure_model, azure.AzureOpenAIModel
    return None


_KINDS: dict[str, tuple[type, ...]] = {
    "bool": (bool,), "bool | None": (bool, type(None)), "int": (int,),
    "float": (int, float), "str": (str,),
    "int | None": (int, type(None)), "float | None": (int, float, type(None)),
    "str | None": (str, type(None))}
"""The values an option of a simple annotation takes (a bool is not a number here)."""


def _check_options(spec: str, adapter: type, options: dict[str, Any]) -> None:
    """Refuse an option the adapter does not take, or a value of the wrong kind
    (`?text_tool_calls=maybe`), naming what it takes instead."""
    import inspect

    params: dict[str, inspect.Parameter] = {}
    for cls in adapter.__mro__:  # an adapter passing **options on takes its base's too
        signature = inspect.signature(cls)
        params.update((n, p) for n, p in signature.parameters.items()
                      if p.kind is inspect.Parameter.KEYWORD_ONLY and n not in params)
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD
                   for p in signature.parameters.values()):
            break
    for key, value in options.items():
        param = params.get(key)
        if param is None:
            raise HandoffsError(
                f"Model {spec!r}: {adapter.__name__} has no option {key!r}; it takes "
                f"{', '.join(params)}.", code="invalid_model")
        kinds = _KINDS.get(str(param.annotation))
        if kinds is not None and (not isinstance(value, kinds)
                                  or (isinstance(value, bool) and bool not in kinds)):
            wanted = "true or false" if kinds == (bool,) else str(param.annotation)
            raise HandoffsError(f"Model {spec!r}: the option {key!r} takes {wanted}, not "
                                f"{value!r}.", code="invalid_model")
