"""What each agent's model sees of the shared transcript.

The transcript is append-only, so the filtered renderings of it are append-only too:
`TranscriptViews` keeps them as lists that grow with the transcript, and a view is a
`Window` of slices over them. Building a request is then O(1) in the length of the
conversation, and a handoff costs the same at message 10 and at message 10,000.

Rules of the renderings:
- `full`: every message, except accepted one-way handoff calls and their results (the
  target gets a note instead), and runtime notes not meant for models.
- `conversation`: user messages and assistant text, no tool traffic.
- `last_user`: only the latest user message before the handoff.
- `none` and `summary`: nothing from before the handoff (a summary goes in the system text).
- `custom`: the route's callable applied once to the `full` rendering before the handoff.
Everything after the handoff is seen in `full`.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from .messages import AssistantMessage, Message, Note, ToolResult, UserMessage
from .session import SessionState, ViewSpec

_Part = tuple[Sequence[Message], int, int]


class Window(Sequence[Message]):
    """An immutable view over slices of append-only lists: no message is copied."""

    __slots__ = ("_len", "_parts")

    def __init__(self, parts: tuple[_Part, ...]) -> None:
        kept = []
        total = 0
        for p in parts:
            size = p[2] - p[1]
            if size > 0:
                kept.append(p)
                total += size
        self._parts = tuple(kept)
        self._len = total

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._len))]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("window index out of range")
        for seq, start, stop in self._parts:
            size = stop - start
            if index < size:
                return seq[start + index]
            index -= size
        raise IndexError("window index out of range")  # pragma: no cover

    @classmethod
    def of(cls, seq: Sequence[Message], start: int, stop: int) -> Window:
        """One slice: the common case, built without the general constructor's loop."""
        w = cls.__new__(cls)
        w._parts = ((seq, start, stop),) if stop > start else ()
        w._len = stop - start if stop > start else 0
        return w

    def __iter__(self) -> Iterator[Message]:
        for seq, start, stop in self._parts:
            for i in range(start, stop):
                yield seq[i]

    def extended(self, seq: Sequence[Message]) -> Window:
        """This window followed by all of `seq` as it is now."""
        return Window((*self._parts, (seq, 0, len(seq))))

    def __repr__(self) -> str:
        return f"Window({list(self)!r})"


def render_full(m: Message) -> Message | None:
    """`m` as the `full` view shows it, or None when it is hidden."""
    if isinstance(m, AssistantMessage):
        calls = m.tool_calls
        if calls:
            for c in calls:
                if c.handoff == "transferred":
                    kept = tuple(c for c in calls if c.handoff != "transferred")
                    if not kept and not m.text:
                        return None
                    return AssistantMessage(m.text, m.agent, kept)
        return m
    if isinstance(m, ToolResult):
        return None if m.handoff == "transferred" else m
    if isinstance(m, Note):
        return m if m.to_model else None
    return m


def render_conversation(m: Message) -> Message | None:
    """`m` as the `conversation` view shows it, or None when it is hidden."""
    if isinstance(m, UserMessage):
        return m
    if isinstance(m, AssistantMessage) and m.text:
        return AssistantMessage(m.text, m.agent) if m.tool_calls else m
    return None


CustomFilter = Callable[[Sequence[Message]], Sequence[Message]]


class TranscriptViews:
    """The renderings of one session's transcript, kept in step with it."""

    __slots__ = ("conv", "conv_at", "custom", "full", "full_at", "records_synced", "synced",
                 "targets")

    def __init__(self) -> None:
        self.full: list[Message] = []
        self.full_at = array("l")
        """`full_at[i]`: the length of `full` before transcript message i."""
        self.conv: list[Message] | None = None
        self.conv_at: array[int] | None = None
        self.custom: dict[str, list[Message]] = {}
        self.synced = 0
        self.targets: list[str] = []
        """Targets of the session's accepted one-way handoffs, in order (for the loop rule)."""
        self.records_synced = 0

    def sync(self, messages: Sequence[Message]) -> None:
        """Render the transcript messages added since the last call."""
        n = len(messages)
        i = self.synced
        if i == n:
            return
        full, full_at = self.full, self.full_at
        conv, conv_at = self.conv, self.conv_at
        while i < n:
            m = messages[i]
            full_at.append(len(full))
            r = render_full(m)
            if r is not None:
                full.append(r)
            if conv is not None and conv_at is not None:
                conv_at.append(len(conv))
                c = render_conversation(m)
                if c is not None:
                    conv.append(c)
            i += 1
        self.synced = n

    def _ensure_conversation(self) -> tuple[list[Message], array[int]]:
        if self.conv is None or self.conv_at is None:
            # Built on first use only: most teams never ask for this view.
            conv: list[Message] = []
            conv_at = array("l")
            # The full rendering keeps every message the conversation view keeps.
            full_at, full = self.full_at, self.full
            for i in range(self.synced):
                conv_at.append(len(conv))
                start = full_at[i]
                stop = full_at[i + 1] if i + 1 < self.synced else len(full)
                for k in range(start, stop):
                    c = render_conversation(full[k])
                    if c is not None:
                        conv.append(c)
            self.conv, self.conv_at = conv, conv_at
        return self.conv, self.conv_at

    @staticmethod
    def _pos(at: array[int], lst: Sequence[Message], i: int) -> int:
        return at[i] if i < len(at) else len(lst)

    def window(
        self,
        messages: Sequence[Message],
        spec: ViewSpec,
        custom: CustomFilter | None = None,
    ) -> Window:
        """The view `spec` over `messages` as they are now."""
        self.sync(messages)
        full = self.full
        end = len(full)
        mode = spec.mode
        if mode == "full":
            return Window.of(full, self._pos(self.full_at, full, spec.start), end)
        tail: _Part = (full, self._pos(self.full_at, full, spec.pivot), end)
        if mode in ("none", "summary"):
            return Window((tail,))
        if mode == "last_user":
            i = spec.start
            prefix: list[Message] = [messages[i]] if i < spec.pivot else []
            return Window(((prefix, 0, len(prefix)), tail))
        if mode == "conversation":
            conv, conv_at = self._ensure_conversation()
            part: _Part = (conv, self._pos(conv_at, conv, spec.start),
                           self._pos(conv_at, conv, spec.pivot))
            return Window((part, tail))
        if mode == "custom":
            key = spec.record_id or ""
            filtered = self.custom.get(key)
            if filtered is None:
                before = full[self._pos(self.full_at, full, spec.start):tail[1]]
                filtered = list(custom(before)) if custom is not None else before
                self.custom[key] = filtered
            return Window(((filtered, 0, len(filtered)), tail))
        raise ValueError(f"unknown history mode {mode!r}")


def views_of(state: SessionState) -> TranscriptViews:
    """The session's views, created on first use (they are never serialised)."""
    cache: TranscriptViews | None = state.cache
    if cache is None:
        cache = state.cache = TranscriptViews()
    return cache


def accepted_targets(session: SessionState) -> list[str]:
    """The targets of the main conversation's accepted one-way handoffs (not those made
    inside a delegation), oldest first (kept in step with `session.handoffs`, so the loop
    rule never rescans the records)."""
    views = views_of(session)
    records = session.handoffs
    i = views.records_synced
    n = len(records)
    if i < n:
        targets = views.targets
        while i < n:
            r = records[i]
            if r.accepted and not r.returns and "line" not in r.extra:
                targets.append(r.target)
            i += 1
        views.records_synced = n
    return views.targets


def last_user_index(messages: Sequence[Message]) -> int:
    """The index of the latest user message, or len(messages) when there is none."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], UserMessage):
            return i
    return len(messages)
