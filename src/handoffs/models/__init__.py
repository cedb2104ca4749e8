"""Models: the `Model` protocol and its adapters.

Provider adapters import their SDKs lazily, inside the adapter module, so that
`import handoffs` never pays for them.
"""

from .base import Model, ModelRequest, ModelResponse, TextDelta, Usage

__all__ = ["Model", "ModelRequest", "ModelResponse", "TextDelta", "Usage"]
