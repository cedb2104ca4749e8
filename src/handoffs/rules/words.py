"""Reading free text: a message's words, whether it mentions a name or a topic, and the
values it holds for a tool's arguments."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_WORD = re.compile(r"[^\W_]+")

_STOP_WORDS = (
    "a about after all also am an and any are as at be been but by can could did do does "
    "doesn for from get got had has have hello hi how i if in into is it its just keep keeps "
    "me my no not now of on or our please so some still than thank thanks that the their "
    "them then there this to too up us very was we were what when where which who why will "
    "with would yes you your hand conversation ask")
STOP = frozenset(_STOP_WORDS.split())
"""Words too common to say what a message is about."""


def words(text: str) -> list[str]:
    """The words of `text`, lower-cased: three letters or more (any length in scripts
    other than Latin)."""
    return [w for w in _WORD.findall(text.lower()) if len(w) >= 3 or not w.isascii()]


def mentions(word: str, names: Sequence[str]) -> bool:
    """True when `word` (from the message) names one of `names`: the same word, one a
    prefix of the other (4+ letters), or a shared stem of 5+ letters ("charged" and
    "charges"); words in other scripts match when one contains the other."""
    for w in names:
        if w == word:
            return True
        if not word.isascii() or not w.isascii():
            if w in word or word in w:
                return True
            continue
        if min(len(w), len(word)) >= 4 and (w.startswith(word) or word.startswith(w)):
            return True
        if w[:5] == word[:5] and len(w) >= 5 and len(word) >= 5:
            return True
    return False


PERSON = frozenset((
    "human", "humans", "person", "persons", "people", "someone", "somebody", "operator",
    "operators", "staff"))
"""Words that ask for a person: the model escalates to a human agent on them."""

VERBS = frozenset((
    "get", "set", "lookup", "look", "find", "fetch", "search", "list", "check", "create",
    "make", "issue", "send", "run", "do", "add", "update", "delete", "remove", "show"))
"""Words of a tool's name that say what it does, not what it is about: a message names
`lookup_order` by "order", not by "look"."""

_IDENT = re.compile(r"\b[A-Za-z]+-?\d+[\w-]*\b")
_NUMBER = re.compile(r"(?<![\w-])\d+(?:\.\d+)?(?![\w-])")
_ID_PARTS = frozenset(("id", "ids", "number", "no", "order", "ref", "reference", "code",
                       "sku", "ticket"))


def topic(text: str) -> list[str]:
    """The words of `text` that say what it is about: no stop words, no bare numbers."""
    return [w for w in words(text) if w not in STOP and not w.isdigit()]


def arguments(schema: Mapping[str, Any], text: str) -> dict[str, Any]:
    """Arguments for an object schema, taken from `text` where a value can be found:
    an identifier like A-1001 for a string named like an id (`order_id`, `ref`), the
    first number for a number, the text's first line for other strings, False for a
    boolean. Properties with no value found are left out."""
    idents = _IDENT.findall(text)
    numbers = [float(n) for n in _NUMBER.findall(text)]
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    args: dict[str, Any] = {}
    properties = schema.get("properties")
    for key, prop in (properties if isinstance(properties, Mapping) else {}).items():
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        if kind == "string" and "enum" not in prop:
            parts = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", key).lower())
            if _ID_PARTS.intersection(parts):
                if idents:
                    args[key] = idents[0]
            elif first_line:
                args[key] = first_line
        elif kind in ("number", "integer") and numbers:
            args[key] = numbers[0] if kind == "number" else int(numbers[0])
        elif kind == "boolean":
            args[key] = False
    return args
