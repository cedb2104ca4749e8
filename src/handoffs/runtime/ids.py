"""Identifiers: short, random, sortable enough for logs."""

from __future__ import annotations

import os


def new_id() -> str:
    """A 16-hex-character random id (64 bits): unique enough per session, and cheap."""
    return os.urandom(8).hex()
