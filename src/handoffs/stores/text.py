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
from operator import attrgetter
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
_Getter = Callable[[Any], tuple[Any, ...]]
_plans: dict[type, tuple[_Getter | None, _Getter | None]] = {}


def _tuple_getter(names: list[str]) -> _Getter | None:
    """A getter of these fields as a tuple (None: no fields)."""
    if not names:
        return None
    one = attrgetter(*names)
    return one if len(names) > 1 else (lambda o: (one(o),))


def _plan(cls: type) -> tuple[_Getter | None, _Getter | None]:
    """For a slotted class: a getter of its text fields and a getter of the fields that
    may hold anything else with text inside (tuples, dicts, Any), each as a tuple."""
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
    plan = _plans[cls] = (_tuple_getter(texts), _tuple_getter(nested))
    return plan


def objects_encodable(objects: Iterable[Any]) -> bool:
    """`encodable` for slotted objects (a commit's new messages and records), tuned for
    the hot path, where a handoff commits a few of them: the text fields of all the
    objects are joined and checked at once (O(1) when ASCII); only fields that may nest
    other text (payloads, extras) are walked, and the objects inside tuples (tool calls)
    are checked the same way."""
    plans = _plans
    texts: list[Any] = []
    nested: list[Any] | None = None  # made when needed: most commits have none
    inner: list[Any] | None = None
    for o in objects:
        cls = type(o)
        getter, nested_of = plans.get(cls) or _plan(cls)
        if getter is not None:
            texts += getter(o)
        if nested_of is None:
            continue
        for v in nested_of(o):
            if not v or isinstance(v, Enum):  # None, empty, a constant of this library
                continue
            tv = type(v)
            if tv is str:  # a Literal-typed field (a handoff mark), or text in an Any
                texts.append(v)
            elif tv is tuple:
                for x in v:
                    cx = type(x)
                    if not getattr(cx, "__slots__", None):
                        if nested is None:
                            nested = []
                        nested.append(x)
                        continue
                    texts_of, deeper = plans.get(cx) or _plan(cx)
                    if deeper is not None:
                        if inner is None:
                            inner = []
                        inner.append(x)
                    elif texts_of is not None:  # a tool call: its text, here
                        texts += texts_of(x)
            else:
                if nested is None:
                    nested = []
                nested.append(v)
    joined = "".join(filter(None, texts))
    if not joined.isascii() and not _encodes(joined):
        return False
    if inner is not None and not objects_encodable(inner):
        return False
    return nested is None or all(map(json_encodable, nested))
