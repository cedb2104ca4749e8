"""The code blocks of the documentation, read the way `test_snippets.py` runs them.

Rules a page follows:
- A ```python block runs; the blocks of one page run in order in one namespace.
- A ```sh block runs line by line in a shell (`handoffs` is this checkout's command).
- A block right after `<!-- not-run: REASON -->` is skipped; the reason is required.
- A block right after `<!-- output -->` is what the runnable block before it prints;
  a line `...` stands for any lines, and `...` inside a line for any text.
- A block right after `<!-- offline-error: CODE -->` runs but cannot work offline (it needs
  a provider): it must fail with a `HandoffsError` of that code, saying why, never print
  nothing and exit 0. The test points the providers' URLs at a local server that refuses.
Every other block is an error, so nothing in the docs can quietly stop being checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
NOT_OURS = {"design.md", "benchmarks.md"}
"""Pages other people generate or own; they follow their own checks."""

FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.S | re.M)
MARK = re.compile(r"<!--\s*(not-run:(?P<reason>[^>]*)|output|offline-error:\s*(?P<code>\w+))"
                  r"\s*-->\s*$")


@dataclass(slots=True)
class Block:
    page: str
    line: int
    lang: str
    code: str
    skip: str | None = None
    """The reason the block is not run, if it is marked so."""
    output: bool = False
    """True for the expected output of the block before it."""
    error: str | None = None
    """The code of the error the block must fail with offline (`offline-error`)."""


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md")
                  if p.relative_to(DOCS).as_posix() not in NOT_OURS
                  and "_hooks" not in p.parts)


def blocks(page: Path, root: Path = DOCS) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        indent = len(m.group("indent"))
        code = "\n".join(line[indent:] for line in m.group("body").splitlines())
        block = Block(page.relative_to(root).as_posix(), text.count("\n", 0, m.start()) + 1,
                      m.group("lang"), code + "\n")
        if mark is not None and mark.group("reason") is not None:
            block.skip = mark.group("reason").strip() or None
            if block.skip is None:
                raise ValueError(f"{block.page}:{block.line}: not-run needs a reason")
        elif mark is not None and mark.group("code") is not None:
            block.error = mark.group("code")
        elif mark is not None:
            block.output = True
        found.append(block)
    return found


def matches(expected: str, actual: str) -> bool:
    """Whether `actual` is what `expected` describes (`...` as a wildcard)."""
    parts = []
    for line in expected.strip("\n").splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(map(re.escape, line.rstrip().split("..."))) + r"[ \t]*\n")
    pattern = "".join(parts)
    return re.fullmatch(pattern, actual.strip("\n") + "\n", re.S) is not None
