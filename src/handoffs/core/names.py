"""Tool names every provider accepts.

OpenAI and Anthropic both require tool names to match `^[a-zA-Z0-9_-]{1,64}$`. Names
made by the library (`transfer_to_<target>`, a function's `__name__`) go through
`tool_name`, which makes any text valid; names a user gives (`@tool(name=...)`,
`Handoff(tool_name=...)`) are checked when the `Team` is built and refused there.
The provider adapters clean the names of replayed calls with the same function, so a
call in the transcript and the tool it called always carry the same name on the wire.
"""

from __future__ import annotations

import re
from typing import Protocol

MAX_TOOL_NAME = 64
"""The longest tool name the providers accept."""

TOOL_NAME_RULE = (
    "a tool name must be 1 to 64 characters long and use only ASCII letters, digits, "
    "'_' and '-'"
)
"""The rule, as a sentence fragment for error messages."""

_VALID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_HASH_LEN = 8


def is_valid_tool_name(name: object) -> bool:
    """True when every provider accepts `name` as a tool name."""
    return isinstance(name, str) and _VALID.fullmatch(name) is not None


def tool_name(name: str) -> str:
    """`name` made valid for every provider, deterministically.

    A valid name is returned unchanged. Otherwise the name is ASCII-folded (Unicode NFKD,
    accents dropped, `é` -> `e`), other characters outside `[a-zA-Z0-9_-]` become `_`,
    and characters with no ASCII form are dropped. When that loses characters (`客服`),
    or the result is longer than 64 characters, a short hash of the original name is
    appended (`transfer_to_<8 hex>`), so different names stay different.
    """
    if _VALID.fullmatch(name) is not None:
        return name
    # Only names that need cleaning pay for these (hashlib loads OpenSSL: ~3 ms).
    import hashlib
    import unicodedata

    out: list[str] = []
    lossy = False
    for ch in unicodedata.normalize("NFKD", name):
        if ch.isascii():
            out.append(ch if ch.isalnum() or ch in "_-" else "_")
        elif not unicodedata.combining(ch):  # an accent folds away; anything else is lost
            lossy = True
    body = "".join(out)
    if not lossy and body and len(body) <= MAX_TOOL_NAME:
        return body
    digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LEN]
    body = body[: MAX_TOOL_NAME - _HASH_LEN - 1].rstrip("_") or "tool"
    return f"{body}_{digest}"


class Named(Protocol):
    """Anything with a `name`: an `Agent`, where a handoff's target may be given by the
    agent itself (a protocol, so a handoff does not import the agent that declares it)."""

    @property
    def name(self) -> str: ...
