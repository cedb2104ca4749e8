"""The HTTP service: `create_app(runner, operator_key=...)` returns an ASGI app.

Needs the `server` extra: `pip install 'handoffs[server]'`. `import handoffs` never
imports this package. The API is documented in docs/serving.md and, live, at `/docs`.
"""

from __future__ import annotations

from .app import create_app
from .service import Settings

__all__ = ["Settings", "create_app"]
