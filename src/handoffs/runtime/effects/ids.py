"""Identifiers: unique across processes, cheap to make."""

from __future__ import annotations

import itertools
import os

_PREFIX = os.urandom(6).hex()
_COUNTER = itertools.count(1)


def new_id() -> str:
    """A random 48-bit per-process prefix plus a counter: unique without a syscall per id."""
    return f"{_PREFIX}{next(_COUNTER):06x}"


def reseed() -> None:
    """Pick a new prefix (call in a forked child so parent and child never collide)."""
    global _PREFIX
    _PREFIX = os.urandom(6).hex()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=reseed)
