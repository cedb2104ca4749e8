"""Text every store can keep: valid Unicode, made so alike on memory, SQLite, PostgreSQL.

A Python `str` may hold lone UTF-16 surrogates ("\\ud800": a bad decode, a model's broken
`\\u` escape), which UTF-8 cannot encode: SQLite and asyncpg refuse such text. Stores
replace each lone surrogate with U+FFFD, and join a high and a low surrogate written as
two code points into the one character they encode (what a UTF-16 decoder does).

NUL ("\\x00") is valid Unicode but PostgreSQL text cannot hold it. Inside JSON (message,
record, event bodies and the session header) it is written as the escape `\\u0000` and
round-trips. Only the plain columns a listing reads (active agent, status, channel,
event type) have it replaced with U+FFFD.

The checks cost nothing for ASCII text (`str.isascii` is O(1)); other text is encoded
once, and repaired only when that fails.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from enum import Enum
from json.encoder import c_make_encoder as _make_encoder  # type: ignore[attr-defined]
from json.encoder import encode_basestring as _basestring
from typing import Any

log = logging.getLogger("handoffs.stores.text")

REPLACEMENT = "\ufffd"


def valid(text: str) -> str:
    """`text` itself when UTF-8 can encode it, else a repaired copy."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return repair(text)
    return text


def repair(text: str) -> str:
    """Lone surrogates become U+FFFD; surrogate pairs become their character."""
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    log.debug("replaced lone surrogates in a text of %d characters", len(text))
    return fixed


def column(text: str | None) -> str | None:
    """A value for a plain text column: valid, and NUL replaced with U+FFFD."""
    if text is None:
        return None
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    return valid(text)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _refuse(value: Any) -> Any:
    raise TypeError


# One C encoder: a nested value is checked in one call, not walked in Python.
_dump: Any = None if _make_encoder is None else _make_encoder(
    None, _refuse, _basestring, None, ":", ",", False, False, True)


def json_encodable(value: Any) -> bool:
    """`encodable` for JSON-like values (dicts, lists of str, numbers, None), through the
    C JSON encoder; anything else it cannot take is walked by `encodable`."""
    if type(value) is dict:  # a flat dict of text (a handoff's context): joined, in C
        try:
            text = "".join(value) + "".join(filter(None, value.values()))
        except TypeError:  # a key or value that is not text: the encoder walks it
            pass
        else:
            return text.isascii() or _encodes(text)
    if _dump is None:
        return encodable(value)
    try:
        text = "".join(_dump(value, 0))
    except (TypeError, ValueError, RecursionError):
        return encodable(value)
    return text.isascii() or _encodes(text)


def encodable(value: Any) -> bool:
    """Whether every str in `value` is valid UTF-8: in dicts (keys too), lists, tuples
    and the fields of slotted objects (messages, tool calls, records). Encodes nothing
    but non-ASCII text; other values (numbers, None) are skipped."""
    t = type(value)
    if t is str:
        return value.isascii() or _encodes(value)
    if t is dict:
        return all(encodable(k) and encodable(v) for k, v in value.items())
    if t is list or t is tuple:
        for v in value:
            tv = type(v)
            if tv is str:
                if not v.isascii() and not _encodes(v):
                    return False
            elif not (v is None or tv is int or tv is float or tv is bool) and not encodable(v):
                return False
        return True
    if isinstance(value, str):  # a str subclass, such as a str enum's member
        return encodable(str.__str__(value))
    if getattr(t, "__slots__", None):
        return objects_encodable((value,))
    return True


_SCALARS = frozenset({"bool", "int", "float",
                      # constants the runtime sets (a str enum, a Literal of marks)
                      "HandoffReason", "HandoffMark | None", "HandoffMark"})
_TEXTS = frozenset({"str", "str | None", "Optional[str]"})
_Gather = Callable[[Any, list[Any], list[Any]], None]
_gatherers: dict[type, _Gather] = {}


def _fields(cls: type) -> tuple[list[str], list[str]]:
    """A slotted class's text fields, and the fields that may hold anything else with
    text inside (tuples, dicts, Any), from its annotations."""
    notes: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        notes.update(getattr(base, "__annotations__", {}))
    texts: list[str] = []
    nested: list[str] = []
    for name in getattr(cls, "__slots__", ()):
        note = notes.get(name, "Any")
        note = note if isinstance(note, str) else getattr(note, "__name__", "Any")
        if note in _SCALARS:
            continue
        (texts if note in _TEXTS else nested).append(name)
    return texts, nested


def _gatherer(cls: type) -> _Gather:
    """A function that adds a `cls` object's text fields to `texts` and its non-empty
    other fields to `more`, compiled once per class as dataclasses compile `__init__`
    (plain field reads: a commit runs one per new message and record)."""
    texts, nested = _fields(cls)  # slot names: identifiers, so safe to compile
    lines = ["def gather(o, texts, more):"]
    if texts:
        lines.append(f"    texts += ({''.join(f'o.{n}, ' for n in texts)})")
    for n in nested:
        lines += [f"    v = o.{n}", "    if v:", "        more.append(v)"]
    lines.append("    return None")
    scope: dict[str, Any] = {}
    exec("\n".join(lines), scope)  # the code above, made of slot names
    gather: _Gather = scope["gather"]
    _gatherers[cls] = gather
    return gather


def objects_encodable(objects: Iterable[Any]) -> bool:
    """`encodable` for slotted objects (a commit's new messages and records), tuned for
    the hot path, where a handoff commits a few of them: the text fields of all the
    objects, and of the objects in their tuples (tool calls), are joined and checked at
    once (O(1) when ASCII); only values that may nest other text (payloads, extras) are
    walked."""
    gatherers = _gatherers
    texts: list[Any] = []
    more: list[Any] = []
    for o in objects:
        gather = gatherers.get(type(o))
        if gather is None:
            gather = _gatherer(type(o))
        gather(o, texts, more)
    nested: list[Any] | None = None
    i = 0
    while i < len(more):  # grows while the objects inside tuples add their own
        v = more[i]
        i += 1
        if isinstance(v, Enum):  # a constant of this library
            continue
        tv = type(v)
        if tv is str:  # a Literal-typed field (a handoff mark), or text in an Any
            texts.append(v)
        elif tv is tuple:
            for x in v:
                gather = gatherers.get(type(x))
                if gather is None:
                    if not getattr(type(x), "__slots__", None):
                        if nested is None:
                            nested = []
                        nested.append(x)
                        continue
                    gather = _gatherer(type(x))
                gather(x, texts, more)
        else:
            if nested is None:
                nested = []
            nested.append(v)
    joined = "".join(filter(None, texts))
    if not joined.isascii() and not _encodes(joined):
        return False
    return nested is None or all(map(json_encodable, nested))
