"""Answers that should not reach the user as they are: pure checks on an agent's text.

- A **narrated handoff**: the agent announces a transfer ("I'll transfer you to
  billing", "Je vous mets en relation avec le service facturation") and calls no tool,
  so nothing moves and the user waits for an agent that never comes. The runner asks
  once more with the transfer tools forced (`HandoffPolicy(narrated_handoffs=...)`).
- A **refusal echo**: the agent hands the user a sentence written for the model (a
  policy refusal, "answer the user yourself instead of handing off again"). The runner
  asks again instead of delivering it.

Both are matched conservatively: a false positive costs one more model call, and the
second answer is delivered (a narration) or counted as a step without progress (an echo).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

NARRATED_HANDOFF = "narrated_handoff"
"""The code of an answer that announced a transfer and made none."""
REFUSAL_ECHO = "refusal_echo"
"""The code of an answer that repeated a sentence meant for the model."""

_PROMISES = (
    r"\b(?:i'?ll|i\s+will|i\s+am\s+going\s+to|i'?m\s+going\s+to|let\s+me|allow\s+me\s+to|"
    r"i\s+would\s+like\s+to|i'?d\s+like\s+to|i'?m|i\s+am|we'?ll|we\s+will|i\s+can\s+now)"
    r"\s+(?:now\s+)?(?:transfer|connect|hand|pass|forward|rout|redirect|escalat|"
    r"put\s+you\s+through|bring\s+in|loop\s+in|send\s+you)",
    r"\b(?:transferring|connecting|handing|passing|forwarding|routing|redirecting)\s+"
    r"(?:you|your\s+\w+|this|the\s+conversation)",
    r"\byou(?:'re|\s+are|\s+will\s+be)\s+(?:now\s+)?(?:being\s+)?"
    r"(?:transferred|connected|redirected|routed|forwarded)",
    # French
    r"\bje\s+(?:vais\s+)?(?:vous|te)\s+(?:transf[eéè]r|mets?\s+en\s+relation|mettre\s+en\s+"
    r"relation|redirig|passe|passer|connect|orient)",
    r"\bje\s+(?:transf[eéè]re|transmets|redirige|passe)\s+(?:votre|ta|la)\s+",
    r"\b(?:laissez|laisse)-moi\s+vous\s+(?:transf|mettre|redirig|passer)",
    # German
    r"\bich\s+(?:leite|verbinde|übergebe|uebergebe|gebe|stelle|schicke)\s+"
    r"(?:sie|dich|ihr|ihre|dein|deine|das)\b",
    r"\bich\s+werde\s+.{0,60}?(?:weiterleiten|verbinden|übergeben|uebergeben|weitergeben)",
    r"\bsie\s+werden\s+(?:jetzt\s+)?(?:weitergeleitet|verbunden)",
    # Spanish, Italian, Portuguese
    r"\b(?:te|le|lo|la|los|las)\s+(?:voy\s+a\s+)?(?:transfiero|transferir|paso|pasar|comunico|"
    r"comunicar|conecto|conectar|redirijo|redirigir|derivo|derivar)",
    r"\bvoy\s+a\s+(?:transferir|pasar|comunicar|conectar|redirigir|derivar)(?:te|le|lo|la)?",
    r"\b(?:ti|la|vi)\s+(?:trasferisco|metto\s+in\s+contatto|passo|inoltro)",
    r"\bvou\s+(?:te\s+|lhe\s+)?(?:transferir|encaminhar|passar|conectar)",
)
"""A first-person promise to move the conversation, in the languages the eval covers.
Each holds one of `_VERB_STEMS`: add a new verb's stem there."""

_VERB_STEMS = (
    "trans", "trasf", "connect", "conect", "hand", "pas", "forward", "rout", "redir",
    "escalat", "put", "bring", "loop", "send", "relation", "orient", "mettre", "metto",
    "leite", "verbinde", "verbund", "gebe", "stelle", "schicke", "comunic", "deriv",
    "inoltr", "encaminh")
"""A piece of every verb `_PROMISES` names, in lower case: an answer holding none of them
promises nothing, and is not searched with the patterns (they cost about 150 µs per KB
of text, where these cost about 15)."""
_SHORTEST_PROMISE = 7
"""No text shorter than this matches `_PROMISES` ("I'm put", as `re`'s parser counts)."""

_SOMEONE = (
    r"\b(?:team|department|specialists?|colleagues?|agents?|experts?|desk|person|human|"
    r"operator|service|équipe|equipe|collègue|collegue|conseiller|abteilung|kolleg\w*|"
    r"fachabteilung|mitarbeiter\w*|departamento|equipo|compañer\w*|especialista|"
    r"reparto|collega|operatore|setor|atendente)\b"
)
"""Words for whoever would take the conversation, when no agent is named."""


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Compiled on first use (an answer to check), not when `handoffs` is imported."""
    return (re.compile("|".join(_PROMISES), re.IGNORECASE),
            re.compile(_SOMEONE, re.IGNORECASE))


@dataclass(slots=True, frozen=True)
class Destination:
    """Who an agent's route leads to, in the words a model may use for them."""

    tool: str
    """The route's tool name (what the runner forces)."""
    names: tuple[str, ...]
    """The target's name, display name and the words of both, lower-cased and folded."""


def destination(tool: str, name: str, label: str) -> Destination:
    """The words that name a route's target (`billing`, `Policy desk`, `policy desk`)."""
    words = {_fold(name), _fold(label), _fold(name.replace("_", " ").replace("-", " "))}
    return Destination(tool, tuple(sorted(w for w in words if len(w) >= 3)))


def narrated(text: str, routes: Sequence[Destination]) -> tuple[bool, str | None]:
    """Whether `text` announces a transfer, and the tool of the one route it names (None
    when it names none or several: any transfer tool may be called)."""
    if not routes or not text:
        return False, None
    if len(text) < _SHORTEST_PROMISE:
        return False, None
    lowered = text.lower()
    for stem in _VERB_STEMS:
        if stem in lowered:
            break
    else:
        return False, None
    promise, someone = _patterns()
    match = promise.search(text)
    if match is None:
        return False, None
    folded = _fold(text)
    named = [r for r in routes if any(_word(n, folded) for n in r.names)]
    if len(named) == 1:
        return True, named[0].tool
    said = match.group(0).lower()
    if named or any(v in said for v in _STRONG) or someone.search(text[match.start():]):
        return True, None
    return False, None


_STRONG = ("transf", "redirig", "redirect", "relation", "leite", "verbinde", "weiterleit",
           "übergeb", "uebergeb", "comunic", "deriv", "contatto", "encaminh", "escalat")
"""Verbs that move a conversation whatever follows them; weaker ones (pass, hand, send,
connect) count only with an agent named or someone to take over."""


_ECHO_MARKERS = (
    "times recently", "instead of handing off again", "you can hand off to",
    "only one handoff per response", "do not match the schema", "the most allowed",
    "handle the request yourself or hand off", "has no route to",
    "is not available right now; continue yourself", "can only be reached through the",
    "lacks the required capabilities", "was already called", "is not run again",
    "call the tool again with corrected arguments", "repeated_tool_call",
    "answer the user yourself", "there is no tool named", "your last response was empty",
    "a handoff only happens when you call",
)
"""Pieces of the runtime's sentences to models that no answer to a user should hold."""
_SHORTEST_MARKER = min(map(len, _ECHO_MARKERS))


def echoes(text: str, sentences: Iterable[str] = ()) -> bool:
    """Whether `text` repeats a sentence written for the model: one of the runtime's
    feedback phrases, or the start of a refusal it received in this turn."""
    if len(text) < _SHORTEST_MARKER:  # (a refusal's start is longer too)
        return False
    lowered = text.lower()
    for marker in _ECHO_MARKERS:  # substring searches: the markers as one pattern
        if marker in lowered:      # ignoring case cost about 150 µs per KB of text
            return True
    for s in sentences:
        head = s[:48].lower()
        if len(head) >= 24 and head in lowered:
            return True
    return False


_NOTE_MARKERS = (
    "answer was not sent", "tool call written as text", "no tools for this answer",
    "not getting anywhere", "only by calling its tool", "a message meant for you",
)
"""Pieces of the runtime's notes to an agent it nudged (`runtime.decisions.converge`):
looked for only in the answers of an agent that got one (`quotes`)."""

_WORD = re.compile(r"[^\W_]+(?:_[^\W_]+)*")
QUOTE_SHARE = 0.75
"""The share of an answer's telling words (`_stems`) that, found in one sentence the
model was given, make the answer a quote of it (`quotes`)."""
_MOST_WORDS = 40
"""Longer answers are never taken for quotes of feedback (they share common words)."""
_LEAST_INSTRUCTIONS = 16
"""Characters an answer needs to be taken for a quote of the agent's instructions."""


_COMMON_WORDS = (
    "a an the i me my you your we our us it its he she they them this that these those "
    "is are was were be been am do does did done have has had can could will would shall "
    "should may might must not no yes and or but so if then than there here to of in on "
    "at by for from with as about into please sorry thanks thank what which who how why "
    "when where all any some just now also very")
_COMMON = frozenset(w[:4] for w in _COMMON_WORDS.split())
"""Words (cut as `_stems` cuts them) that say nothing of where a sentence came from."""


def _stems(text: str) -> list[str]:
    """The telling words of lowered `text` (not `_COMMON`, not numbers), each cut to its
    first four characters (`call`, `called` and `calling` are one)."""
    return [w[:4] for w in _WORD.findall(text)
            if not w.isdigit() and w[:4] not in _COMMON]


def quotes(text: str, feedback: Sequence[str], instructions: str = "",
           anywhere: bool = False) -> bool:
    """Whether `text` quotes what the model was given rather than answering: it holds a
    piece of a nudge's note ("Your last answer was not sent..."), most of its
    telling words (`QUOTE_SHARE` of 2 to 40) come from one of the `feedback` sentences the
    runtime sent it (a nudge, a refusal, a refused call's result: "You call lookup_order
    again."), or its `instructions` begin with it ("You are an AI assistant."), or, with
    `anywhere`, the whole of it or its first 60 characters is a part of them (an
    instructed reply quoted early is an answer: only an agent on its last word is held
    to this). Case and spacing are ignored."""
    lowered = " ".join(text.lower().split())
    if any(marker in lowered for marker in _NOTE_MARKERS):
        return True
    if instructions and len(lowered) >= _LEAST_INSTRUCTIONS:
        told = " ".join(instructions.lower().split())
        quoted = lowered.rstrip(".!")
        if told.startswith(quoted) or (anywhere and (
                quoted in told or (len(quoted) > 60 and quoted[:60] in told))):
            return True
    said = _stems(lowered)
    if not 2 <= len(said) <= _MOST_WORDS:
        return False
    need = QUOTE_SHARE * len(said)
    for sentence in feedback:
        given = set(_stems(sentence.lower()))
        if sum(w in given for w in said) >= need:
            return True
    return False


CALL_TEXT = "call_text"
"""The code of an answer that is a tool call written as text (no tool read it)."""

_CALL_SHAPE = re.compile(
    r'^\s*(?:```\w*\s*)?(?:<tool_call>\s*)?\[?\s*\{\s*"(?:name|type|function)"')


def looks_like_call(text: str) -> bool:
    """Whether `text` is a tool call written as text (`{"name": ..., "arguments": ...}`,
    fenced, in `<tool_call>` tags): JSON for a machine, never an answer for a person."""
    if _CALL_SHAPE.match(text) is None:
        return "<tool_call>" in text
    return '"arguments"' in text or '"parameters"' in text or '"function"' in text


def _fold(text: str) -> str:
    """Lower case without accents, for matching names in any language."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _word(name: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None
