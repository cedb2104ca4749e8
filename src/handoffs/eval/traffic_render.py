"""Stored traffic played again (`eval.traffic`), as text and as one HTML page: how many
turns are routed as before, who answers now instead of whom, and every turn that
differs."""

from __future__ import annotations

import time
from html import escape
from typing import TYPE_CHECKING

from .figures import frac
from .html import STYLE
from .traffic import ROUTINGS

if TYPE_CHECKING:
    from ..runtime.replay import ReplayTurn
    from .traffic import TrafficReplay


def traffic_text(found: TrafficReplay, color: bool = False) -> str:
    """The whole replay for a terminal: figures, the then × now matrix, differing turns."""
    turns = found.turns
    lines = [f"handoffs eval --from-store: {len(found.replays)} sessions, {len(turns)} turns "
             f"from {found.source}{_window(found)}, replayed on {found.model}", ""]
    routing = found.routing()
    rows = [[f"turns routed: {name}", frac(routing.get(name, 0), len(turns))]
            for name in ROUTINGS]
    rows.append(["turns answered by the same agent",
                 frac(found.same_agent(), len(turns))])
    rows.append(["sessions routed the same throughout",
                 frac(sum(r.same for r in found.replays), len(found.replays))])
    totals = found.totals()
    rows.append(["model calls", str(totals.model_calls)])
    rows.append(["prompt kB", f"{totals.prompt_bytes / 1000:.1f}"])
    rows.append(["tokens in / out", f"{totals.input_tokens} / {totals.output_tokens}"
                 if totals.tokens else "not reported"])
    lines += _table(["", ""], rows)[1:]  # no header: each row says what it counts
    if found.skipped:
        codes: dict[str, int] = {}
        for s in found.skipped:
            codes[s.code] = codes.get(s.code, 0) + 1
        lines.append(f"skipped sessions: {len(found.skipped)} ("
                     + ", ".join(f"{k} {v}" for k, v in codes.items()) + ")")
    lines += ["", _bold("who answered: then (rows) × now (columns)", color)]
    lines += _matrix(found)
    differing = found.differing()
    lines.append("")
    if not differing:
        lines.append("every turn was routed as before")
    else:
        lines.append(f"turns routed otherwise ({len(differing)}):")
        lines += _table(["session", "turn", "user", "then", "now", "routing"],
                        [[s, str(t.turn), _clip(t.text, 36), t.original.hops, t.new.hops,
                          t.routing] for s, t in differing], figures=False)
    for r in found.replays:
        if r.stopped:
            lines.append(f"{r.session_id}: stopped at {r.stopped}")
    return "\n".join(lines) + "\n"


def traffic_html(found: TrafficReplay, title: str = "handoffs eval --from-store") -> str:
    """The whole replay as one HTML document (styles inline, no scripts)."""
    turns = found.turns
    routing = found.routing()
    totals = found.totals()
    cards = [(name, frac(routing.get(name, 0), len(turns))) for name in ROUTINGS]
    cards += [("sessions", str(len(found.replays))), ("skipped", str(len(found.skipped))),
              ("model calls", str(totals.model_calls)),
              ("prompt", f"{totals.prompt_bytes / 1000:.1f} kB")]
    out = ["<!doctype html><html lang=en><head><meta charset=utf-8>",
           '<meta name=viewport content="width=device-width,initial-scale=1">',
           f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
           f"<h1>{escape(title)}</h1>",
           f"<p class=meta>{len(found.replays)} sessions, {len(turns)} turns from "
           f"{escape(found.source)}{escape(_window(found))}, replayed on "
           f"{escape(found.model)}</p><div class=cards>",
           *(f"<div class=card><b>{escape(v)}</b><span>{escape(k)}</span></div>"
             for k, v in cards), "</div>",
           "<h3>The agent that answered then (rows) and now (columns)</h3>",
           _html_matrix(found)]
    differing = found.differing()
    out.append(f"<h3>Turns routed otherwise ({len(differing)})</h3>")
    if differing:
        out.append("<table class=differing><thead><tr><th>session</th><th>turn</th>"
                   "<th>user</th><th>then</th><th>now</th><th>routing</th></tr></thead>"
                   f"<tbody>{''.join(_html_turn(s, t) for s, t in differing)}</tbody></table>")
    else:
        out.append("<p class=good>Every turn was routed as before.</p>")
    if found.skipped:
        out.append("<h3>Sessions not replayed</h3><table class=skipped>" + "".join(
            f"<tr><td>{escape(s.session)}</td><td><code>{escape(s.code)}</code></td>"
            f"<td>{escape(s.message)}</td></tr>" for s in found.skipped) + "</table>")
    out.append("</body></html>\n")
    return "".join(out)


def _html_turn(session: str, t: ReplayTurn) -> str:
    return (f'<tr data-routing="{escape(t.routing)}"><td>{escape(session)}</td>'
            f"<td>{t.turn}</td><td>{escape(_clip(t.text, 80))}</td>"
            f"<td>{escape(t.original.hops)}</td><td>{escape(t.new.hops)}</td>"
            f"<td class=bad>{escape(t.routing)}</td></tr>")


def _names(found: TrafficReplay) -> list[str]:
    matrix = found.matrix()
    names = dict.fromkeys(matrix)
    for cols in matrix.values():
        names.update(dict.fromkeys(cols))
    return list(names)


def _matrix(found: TrafficReplay) -> list[str]:
    matrix = found.matrix()
    names = _names(found)
    body = []
    for row, counts in matrix.items():
        total = sum(counts.values())
        body.append([row, *(str(counts[c]) if counts.get(c) else "." for c in names),
                     frac(counts.get(row, 0), total)])
    return _table(["then \\ now", *names, "same agent"], body)


def _html_matrix(found: TrafficReplay) -> str:
    matrix = found.matrix()
    names = _names(found)
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    rows = []
    for row, counts in matrix.items():
        cells = "".join(
            f'<td class="cell{" diag" if c == row else ""}" data-count="{counts.get(c, 0)}">'
            f"{counts.get(c, 0) or ''}</td>" for c in names)
        rows.append(f"<tr><th>{escape(row)}</th>{cells}</tr>")
    return (f"<table class=heatmap><thead><tr><th>then \\ now</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _window(found: TrafficReplay) -> str:
    def when(at: float) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))

    if found.since is None and found.until is None:
        return ""
    if found.until is None:
        return f" since {when(found.since or 0)}"
    return f" from {when(found.since or 0)} to {when(found.until)}"


def _table(header: list[str], rows: list[list[str]], figures: bool = True) -> list[str]:
    """Columns padded to one width; `figures`: all but the first aligned right."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def cell(i: int, text: str) -> str:
        return text.rjust(widths[i]) if figures and i else text.ljust(widths[i])

    return ["  ".join(cell(i, c) for i, c in enumerate(r)).rstrip() for r in [header, *rows]]


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


def _bold(text: str, color: bool) -> str:
    return f"\033[1m{text}\033[0m" if color else text
