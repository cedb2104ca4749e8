"""`AzureOpenAIModel`: OpenAI models deployed on Azure (Azure OpenAI, Azure AI Foundry).

    Runner(team, model="azure:my-gpt-4o-deployment")    # AZURE_OPENAI_ENDPOINT + key

The model string names the deployment. Two APIs, both on the official `openai` SDK:

- the **v1 API** (the default: no `api_version`): `<endpoint>/openai/v1/`, the plain
  `AsyncOpenAI` client, no dated version to keep up with;
- the **dated API** (`api_version="2024-10-21"`, or OPENAI_API_VERSION):
  `<endpoint>/openai/deployments/<deployment>/...?api-version=...`, through
  `AsyncAzureOpenAI`.

Credentials: an API key (`api_key`, else AZURE_OPENAI_API_KEY), or Microsoft Entra ID
through `token_provider`, a callable that returns a bearer token (sync or async), e.g.
`azure.identity.get_bearer_token_provider(DefaultAzureCredential(),
"https://cognitiveservices.azure.com/.default")`. Azure is hosted: no default output
limit. A deployment's name does not say whether its model reasons; say
`reasoning_model=True` for an o-series or gpt-5 deployment, so an output limit is sent as
`max_completion_tokens`.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import HandoffsError, ModelError
from .openai import OpenAIModel

TokenProvider = Callable[[], "str | Awaitable[str]"]
"""A callable that returns a Microsoft Entra ID bearer token (or an awaitable of one)."""


class AzureOpenAIModel(OpenAIModel):
    """A `Model` on an Azure OpenAI deployment (Chat Completions; see the module text)."""

    def __init__(self, deployment: str, *, endpoint: str | None = None,
                 api_version: str | None = None, api_key: str | None = None,
                 token_provider: TokenProvider | None = None, **options: Any) -> None:
        """`deployment`: the deployment's name (sent as the model). `endpoint`: the
        resource's URL (`https://<resource>.openai.azure.com`), else AZURE_OPENAI_ENDPOINT.
        `api_version`: the dated API's version, else OPENAI_API_VERSION; neither: the v1
        API. `api_key` (else AZURE_OPENAI_API_KEY) or `token_provider` (Entra ID): the
        credentials. `options`: as `OpenAIModel`'s (`timeout`, `max_retries`, `settings`,
        `reasoning_model`, ...), without `base_url`."""
        endpoint = endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not endpoint:
            raise HandoffsError("Azure OpenAI needs the resource's endpoint: set "
                                "AZURE_OPENAI_ENDPOINT or pass endpoint='https://<resource>."
                                "openai.azure.com'.", code="invalid_model")
        if "base_url" in options:
            raise HandoffsError("AzureOpenAIModel takes endpoint=, not base_url=.",
                                code="invalid_model")
        self.endpoint = endpoint.rstrip("/")
        self.api_version = api_version or os.environ.get("OPENAI_API_VERSION") or None
        """The dated API's version; None: the v1 API."""
        self._azure_key = api_key or os.environ.get("AZURE_OPENAI_API_KEY")
        self._token_provider = token_provider
        options.setdefault("provider", "azure")
        options.setdefault("local", False)
        super().__init__(deployment, api_key=self._azure_key or "unused",
                         base_url=f"{self.endpoint}/openai/v1/", **options)

    def __repr__(self) -> str:
        return f"AzureOpenAIModel({self.model!r}, endpoint={self.endpoint!r})"

    def _check_credentials(self) -> None:
        if not self._azure_key and self._token_provider is None:
            raise ModelError("No Azure OpenAI credentials: set AZURE_OPENAI_API_KEY, or pass "
                             "api_key=... or token_provider=... (Microsoft Entra ID).",
                             "auth_error")

    def _make_client(self) -> Any:
        sdk = self._sdk
        common: dict[str, Any] = {"timeout": self.http_timeout(), "max_retries": 0}
        if self.api_version is not None:
            return sdk.AsyncAzureOpenAI(
                azure_endpoint=self.endpoint, api_version=self.api_version,
                api_key=self._azure_key if self._token_provider is None else None,
                azure_ad_token_provider=self._token_provider, **common)
        if self._token_provider is not None:
            return sdk.AsyncOpenAI(base_url=self.base_url,
                                   api_key=_awaitable(self._token_provider), **common)
        key = self._azure_key or ""
        return sdk.AsyncOpenAI(base_url=self.base_url, api_key=key,
                               default_headers={"api-key": key}, **common)


def _awaitable(provider: TokenProvider) -> Callable[[], Awaitable[str]]:
    """The token provider as the async callable `AsyncOpenAI(api_key=...)` takes."""
    async def token() -> str:
        value = provider()
        return str(await value) if inspect.isawaitable(value) else str(value)
    return token


def azure_model(name: str, **options: Any) -> AzureOpenAIModel:
    """`get_model("azure:<deployment>")`: an Azure OpenAI deployment (see the module)."""
    return AzureOpenAIModel(name, **options)
