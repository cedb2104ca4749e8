"""Session stores: where conversations live between turns.

`MemoryStore` is in process; durable stores (SQLite, PostgreSQL) import their drivers
only when created.
"""

from .base import SessionStore, SessionSummary, open_store
from .memory import MemoryStore

__all__ = ["MemoryStore", "SessionStore", "SessionSummary", "open_store"]
