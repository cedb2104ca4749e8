"""Reading free text: a message's words, and whether it mentions a name or a topic."""

from __future__ import annotations

import re
from collections.abc import Sequence

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

