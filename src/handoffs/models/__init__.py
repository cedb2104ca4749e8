"""Models: the `Model` protocol and its adapters.

Provider adapters import their SDKs lazily, inside the adapter module, so that
`import handoffs` never pays for them. `RetryPolicy` (which needs asyncio) loads on
first use.
"""

from typing import TYPE_CHECKING, Any

from .base import Model, ModelRequest, ModelResponse, TextDelta, Usage
from .registry import get_model, register_provider

if TYPE_CHECKING:
    from .retry import RetryPolicy


def __getattr__(name: str) -> Any:
    if name != "RetryPolicy":
        raise AttributeError(f"module 'handoffs.models' has no attribute {name!r}")
    from .retry import RetryPolicy

    globals()[name] = RetryPolicy
    return RetryPolicy


__all__ = ["Model", "ModelRequest", "ModelResponse", "RetryPolicy", "TextDelta", "Usage",
           "get_model", "register_provider"]
