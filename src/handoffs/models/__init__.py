"""Models: the `Model` protocol and its adapters.

Provider adapters import their SDKs lazily, inside the adapter module, so that
`import handoffs` never pays for them. `RetryPolicy` (which needs asyncio) loads on
first use.
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .base import Model, ModelRequest, ModelResponse, TextDelta, Usage
from .registry import get_model, register_provider

if TYPE_CHECKING:
    from .retry import RetryPolicy


__getattr__ = lazy_names(__name__, {"RetryPolicy": "retry"}, globals())


__all__ = ["Model", "ModelRequest", "ModelResponse", "RetryPolicy", "TextDelta", "Usage",
           "get_model", "register_provider"]
