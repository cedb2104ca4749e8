"""What each agent's model sees of the shared transcript.

The transcript is append-only, so the filtered renderings of it are append-only too:
`TranscriptViews` keeps them as lists that grow with the transcript, and a view is a
`Window` of slices over them. Building a request is then O(1) in the length of the
conversation, and a handoff costs the same at message 10 and at message 10,000.

Rules of the renderings:
- `full`: every message, except accepted one-way handoff calls and their results (the
  target gets a note instead), and runtime notes not meant for models.
- `conversation`: user messages and assistant text, no tool traffic.
- `own_tools` (the default): `conversation`, plus the viewing agent's own tool calls,
  results and notes as `full` shows them, and what it answered as a delegate (its
  caller's call result, `ToolResult.delegate`) as its own assistant message, after the
  task it was given. Another agent's tool traffic reaches the viewer only through a
  route that asks for it (`full`, a function) or through what that agent wrote: its
  answers, the handoff's reason and payload.
- `last_user`: only the latest user message before the handoff.
- `none` and `summary`: nothing from before the handoff (a summary goes in the handoff's
  note, shown at the handoff: `core.handoff.note_message`).
- `custom`: the route's callable applied once to the `full` rendering before the handoff.
Everything after the handoff is seen in `full`.

The `conversation` and `own_tools` renderings are built on first use and kept in step
from then on; `own_tools` needs no list of its own while nothing before the handoff is
another agent's tool traffic (the view is then a slice of `full`), nor, for an agent
that made no call before the handoff, more than the `conversation` list.
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

    def inserted(self, index: int, m: Message) -> Window:
        """This window with `m` shown at `index` (a handoff's note at the handoff)."""
        w = Window.__new__(Window)
        w._len = self._len + 1
        own = self._parts
        if len(own) == 1:  # the common case: one slice, split at the handoff
            part = own[0]
            seq, start, stop = part
            at = start + index
            note: _Part = ((m,), 0, 1)
            w._parts = ((note, part) if at == start else (part, note) if at == stop
                        else ((seq, start, at), note, (seq, at, stop)))
            return w
        parts: list[_Part] = []
        left = index
        for p in self._parts:
            seq, start, stop = p
            if 0 <= left < stop - start:
                if left:
                    parts.append((seq, start, start + left))
                parts.append(((m,), 0, 1))
                parts.append((seq, start + left, stop))
                left = -1
            else:
                parts.append(p)
                if left >= 0:
                    left -= stop - start
        if left >= 0:  # at the end
            parts.append(((m,), 0, 1))
        w._parts = tuple(parts)
        return w

    def __repr__(self) -> str:
        return f"Window({list(self)!r})"


def render_full(m: Message) -> Message | None:
    """`m` as the `full` view shows it, or None when it is hidden."""
    if isinstance(m, AssistantMessage):
        calls = m.tool_calls
        if calls:
            for c in calls:
                if c.handoff == "transferred":
                    kept = (tuple(c for c in calls if c.handoff != "transferred")
                            if len(calls) > 1 else ())  # (one call: no generator)
                    if not kept and not m.text:
                        return None
                    return AssistantMessage(m.text, m.agent, kept, m.reasoning)
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
        return AssistantMessage(m.text, m.agent, (), m.reasoning) if m.tool_calls else m
    return None


def render_own_tools(m: Message, agent: str) -> Message | None:
    """`m` as `agent` sees it in the `own_tools` view (`m` as `full` shows it, or None):
    its own messages; the answer it gave as a delegate (its caller's call result) as its
    own assistant message; the conversation of everyone else."""
    if m.agent == agent:
        return m
    if m.__class__ is ToolResult and m.delegate == agent:
        return _answered(m, agent)
    return render_conversation(m)


def _answered(m: ToolResult, agent: str) -> Message | None:
    """A delegation's result as its delegate sees it: what it answered, as its own
    message (a delegation that failed is its caller's traffic: hidden)."""
    return None if m.is_error else AssistantMessage(m.text, agent)


def add_own_tools(seq: list[Message], m: Message, agent: str) -> None:
    """Append `m` as `agent` sees it in the `own_tools` view: `render_own_tools`, with
    the task of a delegation `agent` answered before its answer (as a user message, as
    the delegate was given it)."""
    if m.agent == agent:
        seq.append(m)
        return
    if m.__class__ is ToolResult and m.delegate == agent:
        answer = _answered(m, agent)
        if answer is not None:
            task = m.task
            if task and not _latest_user_is(seq, task):
                seq.append(UserMessage(task, agent))
            seq.append(answer)
        return
    c = render_conversation(m)
    if c is not None:
        seq.append(c)


def _latest_user_is(seq: Sequence[Message], text: str) -> bool:
    """Whether the latest user message of `seq` says `text` (a delegate handed the
    user's message was given it as its task: it is not shown twice)."""
    for i in range(len(seq) - 1, -1, -1):
        m = seq[i]
        if m.__class__ is UserMessage:
            return m.text == text
    return False


def own_tools_filter(agent: str) -> Callable[[Sequence[Message]], list[Message]]:
    """The `own_tools` view of `agent` as a filter over messages as `full` shows them (a
    delegate's view of its caller's: it runs once per delegation, not per request)."""
    def keep(messages: Sequence[Message]) -> list[Message]:
        seq: list[Message] = []
        for m in messages:
            add_own_tools(seq, m, agent)
        return seq
    return keep


CustomFilter = Callable[[Sequence[Message]], Sequence[Message]]

_NONE: dict[str, int] = {}
"""An empty mapping to read from (never written)."""


class TranscriptViews:
    """The renderings of one session's transcript, kept in step with it."""

    __slots__ = ("conv", "conv_at", "custom", "full", "full_at", "own", "records_synced",
                 "synced", "targets", "traffic")

    def __init__(self) -> None:
        self.full: list[Message] = []
        self.full_at = array("l")
        """`full_at[i]`: the length of `full` before transcript message i."""
        self.conv: list[Message] | None = None
        self.conv_at: array[int] | None = None
        # The others are made on first use: most sessions need none of them, and every
        # live session keeps its views.
        self.custom: dict[str, list[Message]] | None = None
        self.own: dict[str, tuple[list[Message], array[int]]] | None = None
        """Per agent, its `own_tools` rendering and positions (like `conv` and `conv_at`),
        made only for an agent whose own traffic comes before a handoff to it."""
        self.traffic: dict[str, int] | None = None
        """Per agent, the transcript index of its first message that `full` shows and
        `conversation` does not (a tool call, a result, a note, an empty answer)."""
        self.synced = 0
        self.targets: list[str] | None = None
        """Targets of the session's accepted one-way handoffs, in order (for the loop rule)."""
        self.records_synced = 0

    def sync(self, messages: Sequence[Message]) -> None:
        """Render the transcript messages added since the last call."""
        n = len(messages)
        i = self.synced
        if i == n:
            return
        # A guardrail's reply hides the exchange it ends. Looked for on a first rendering
        # only: the runtime drops a session's views when it appends one (`drop_views`).
        hidden = refused_spans(messages, 0, n) if i == 0 else None
        full, full_at, traffic = self.full, self.full_at, self.traffic
        conv, conv_at = self.conv, self.conv_at
        own = self.own
        while i < n:
            m = messages[i]
            full_at.append(len(full))
            r = None if hidden and _within(hidden, i) else render_full(m)
            if r is not None:
                full.append(r)
                if r.__class__ is not UserMessage and (
                        r.__class__ is not AssistantMessage or r.tool_calls or not r.text):
                    if traffic is None:
                        traffic = self.traffic = {}
                    if r.agent not in traffic:
                        traffic[r.agent] = i
                    # A delegate's answer is its own traffic too (`render_own_tools`).
                    by = r.delegate if r.__class__ is ToolResult else None
                    if by is not None and by not in traffic:
                        traffic[by] = i
            if conv is not None and conv_at is not None:
                conv_at.append(len(conv))
                c = render_conversation(r) if r is not None else None
                if c is not None:
                    conv.append(c)
            if own is not None:
                for agent, (seq, at) in own.items():
                    at.append(len(seq))
                    if r is not None:
                        add_own_tools(seq, r, agent)
            i += 1
        self.synced = n

    def _ensure_conversation(self) -> tuple[list[Message], array[int]]:
        if self.conv is None or self.conv_at is None:
            # Built on first use only: a view needs it once another agent's tool
            # traffic comes before a handoff (or a route asks for `conversation`).
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

    def _ensure_own(self, agent: str) -> tuple[list[Message], array[int]]:
        own = self.own
        if own is None:
            own = self.own = {}
        made = own.get(agent)
        if made is None:
            # Up to the agent's first own traffic, its rendering is the conversation's.
            conv, conv_at = self._ensure_conversation()
            first = (self.traffic or _NONE).get(agent, self.synced)
            seq = conv[:self._pos(conv_at, conv, first)]
            at = conv_at[:first]
            full_at, full = self.full_at, self.full
            for i in range(first, self.synced):
                at.append(len(seq))
                stop = full_at[i + 1] if i + 1 < self.synced else len(full)
                for k in range(full_at[i], stop):
                    add_own_tools(seq, full[k], agent)
            made = own[agent] = (seq, at)
        return made

    def _own_tools(self, spec: ViewSpec, agent: str) -> Window:
        """`agent`'s `own_tools` view when another agent's traffic comes before the pivot:
        the conversation list if the agent made no call of its own before it, else its
        own list."""
        first = (self.traffic or _NONE).get(agent)
        if first is None or first >= spec.pivot:
            seq, at = self._ensure_conversation()
        else:
            seq, at = self._ensure_own(agent)
        full = self.full
        return Window(((seq, self._pos(at, seq, spec.start), self._pos(at, seq, spec.pivot)),
                       (full, self._pos(self.full_at, full, spec.pivot), len(full))))

    @staticmethod
    def _pos(at: array[int], lst: Sequence[Message], i: int) -> int:
        return at[i] if i < len(at) else len(lst)

    def since(self, i: int) -> int:
        """How many messages of the `full` rendering come from transcript message `i` on
        (after `sync`): what every view shows in full after its pivot."""
        at = self.full_at
        return len(self.full) - at[i] if i < len(at) else 0

    def window(
        self,
        messages: Sequence[Message],
        spec: ViewSpec,
        custom: CustomFilter | None = None,
        agent: str = "",
    ) -> Window:
        """The view `spec` over `messages` as they are now, for `agent` (the agent whose
        view it is: the `own_tools` view shows that agent's own tool traffic)."""
        self.sync(messages)
        full = self.full
        end = len(full)
        mode = spec.mode
        if mode == "full":
            at, i = self.full_at, spec.start  # `_pos`, inlined: once per model request
            return Window.of(full, at[i] if i < len(at) else end, end)
        if mode == "own_tools":
            traffic = self.traffic
            if traffic:  # no loop in the common case: no agent called a tool yet
                pivot = spec.pivot
                for name, first in traffic.items():
                    if first < pivot and name != agent:
                        return self._own_tools(spec, agent)
            # Nothing before the pivot is another agent's tool traffic: `full` shows it.
            at, i = self.full_at, spec.start
            return Window.of(full, at[i] if i < len(at) else end, end)
        tail: _Part = (full, self._pos(self.full_at, full, spec.pivot), end)
        if mode in ("none", "summary"):
            return Window((tail,))
        if mode == "last_user":
            i = spec.start
            prefix: list[Message] = [messages[i]] if i < spec.pivot else []
            return Window(((prefix, 0, len(prefix)), tail))
        if mode == "conversation":
            conv, conv_at = self._ensure_conversation()
            return Window(((conv, self._pos(conv_at, conv, spec.start),
                            self._pos(conv_at, conv, spec.pivot)), tail))
        if mode == "custom":
            key = spec.record_id or ""
            made = self.custom
            if made is None:
                made = self.custom = {}
            filtered = made.get(key)
            if filtered is None:
                before = full[self._pos(self.full_at, full, spec.start):tail[1]]
                filtered = list(custom(before)) if custom is not None else before
                made[key] = filtered
            return Window(((filtered, 0, len(filtered)), tail))
        raise ValueError(f"unknown history mode {mode!r}")


def refused_spans(messages: Sequence[Message], start: int, stop: int
                  ) -> list[tuple[int, int]]:
    """The refused exchanges whose guardrail reply is among `messages[start:stop]`:
    (first, last) transcript indices, from the user message a guardrail refused through
    its reply (`AssistantMessage.refused`). No view shows them to a model."""
    spans: list[tuple[int, int]] = []
    for j in range(start, stop):
        m = messages[j]
        if isinstance(m, AssistantMessage) and m.refused is not None:
            k = j - 1
            while k > 0 and messages[k].__class__ is not UserMessage:
                k -= 1
            spans.append((max(k, 0), j))
    return spans


def _within(spans: list[tuple[int, int]], i: int) -> bool:
    return any(first <= i <= last for first, last in spans)


def drop_views(state: SessionState) -> None:
    """Forget the session's views (they are rendered again on next use): what a change
    to what earlier messages show needs, as a guardrail's reply hiding its exchange."""
    state.cache = None


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
    targets = views.targets
    if targets is None:
        targets = views.targets = []
    if i < n:
        while i < n:
            r = records[i]
            if r.accepted and not r.returns and "line" not in r.extra:
                targets.append(r.target)
            i += 1
        views.records_synced = n
    return targets


def last_user_index(messages: Sequence[Message]) -> int:
    """The index of the latest user message, or len(messages) when there is none."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], UserMessage):
            return i
    return len(messages)
