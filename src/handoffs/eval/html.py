"""The evaluation report as one HTML file: nothing loaded from elsewhere (styles inline, no
scripts), the matrix as a heat map, and every conversation that did not pass expandable
down to what each agent's model was sent and answered (`<details>`, native to the page)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from .figures import NOT_APPLICABLE, notes, side_by_side
from .judge import TurnResult, grouped_refusals
from .recording import ModelCall
from .reliability import shown_ks
from .symptoms import SYMPTOMS

if TYPE_CHECKING:
    from .results import EvalRun

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:1200px;padding:0 16px;color:#1f2937;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;
border-bottom:1px solid #e5e7eb;padding-bottom:4px}h3{font-size:15px;margin:20px 0 6px}
.meta{color:#6b7280;margin:0 0 16px}
table{border-collapse:collapse;margin:6px 0}
th,td{padding:4px 10px;border:1px solid #e5e7eb;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}thead th{background:#f9fafb}
table.heatmap td.cell{min-width:44px;text-align:center;font-variant-numeric:tabular-nums}
table.heatmap th.col{writing-mode:vertical-rl;transform:rotate(180deg);text-align:left;
padding:8px 4px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:8px 0}
.card{border:1px solid #e5e7eb;border-radius:8px;padding:8px 14px;min-width:120px}
.card b{display:block;font-size:20px}.card span{color:#6b7280;font-size:12px}
.good{color:#047857}.bad{color:#b91c1c}
details.case{border:1px solid #e5e7eb;border-radius:8px;margin:6px 0;padding:4px 10px}
details.case>summary{cursor:pointer;font-weight:600;padding:4px 0}
details.case>summary .why{font-weight:400;color:#b91c1c;margin-left:8px}
.turn{border-left:4px solid #10b981;padding:4px 10px;margin:8px 0;background:#f9fafb}
.turn.fail{border-color:#ef4444}
.turn .user{font-weight:600}.turn .problems{color:#b91c1c}
.turn .facts{color:#374151;font-size:13px}
details.calls>summary,details.saw>summary{cursor:pointer;color:#2563eb;font-size:13px}
.call{border:1px solid #e5e7eb;border-radius:6px;margin:6px 0;padding:6px 10px;
background:#fff;font-size:13px}
.call .who{font-weight:600}.msg{margin:2px 0;white-space:pre-wrap;word-break:break-word}
.msg .role{display:inline-block;min-width:88px;color:#6b7280}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f4f6;padding:6px;
border-radius:4px;margin:4px 0}
.refused{color:#b91c1c}code{font-size:12px}
"""


def render_html(runs: Sequence[EvalRun], title: str = "handoffs eval") -> str:
    """The whole report (its runs) as one HTML document."""
    first = runs[0]
    turns = len(first.turns) // max(first.repeat, 1)
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        '<meta name=viewport content="width=device-width,initial-scale=1">',
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p class=meta>{len(first.cases)} cases, {turns} turns"
        + (f", each played {first.repeat} times" if first.repeat > 1 else "")
        + f"; {len(runs)} run{'s' * (len(runs) > 1)}</p>",
        _side_by_side(runs),
    ]
    for i, run in enumerate(runs):
        parts.append(_run(run, i))
    parts.append("</body></html>\n")
    return "".join(parts)


def _side_by_side(runs: Sequence[EvalRun]) -> str:
    head = "".join(f'<th><a href="#run-{i}">{escape(r.label)}</a></th>'
                   for i, r in enumerate(runs))
    body = "".join(f"<tr><td>{escape(name)}</td>"
                   f"{''.join(f'<td>{escape(v)}</td>' for v in vals)}</tr>"
                   for name, vals in side_by_side(runs))
    foot = "".join(f"<p class=meta>{escape(n)}</p>" for n in notes(runs))
    return (f"<table class=summary><thead><tr><th></th>{head}</tr></thead>{body}</table>"
            + foot)


def _run(run: EvalRun, index: int) -> str:
    t = run.totals()
    tokens = ("not reported" if t["input_tokens"] is None
              else f"{t['input_tokens']} in / {t['output_tokens']} out")
    routing = run.routing_accuracy
    cards = [("turn accuracy", _pct(run.accuracy)),
             ("routing", _pct(routing) if routing is not None else NOT_APPLICABLE),
             ("answer", _pct(run.answer_accuracy)),
             ("cases", _pct(run.case_accuracy))]
    if run.repeat > 1:
        cards.append((f"pass^{run.repeat}", _pct(run.pass_k(run.repeat))))
    cards += [("model calls", f"{t['model_calls']}"),
              ("prompt", f"{t['prompt_bytes'] / 1000:.1f} kB"), ("tokens", tokens),
              ("latency p95", _secs(t["latency_p95"]))]
    failing = run.failing
    out = [f'<section class=run id="run-{index}"><h2>{escape(run.label)}</h2>',
           "<div class=cards>", *(f"<div class=card><b>{escape(v)}</b><span>{escape(k)}"
                                  "</span></div>" for k, v in cards), "</div>"]
    if run.routes_apply:
        out += ["<h3>Who answered: expected agent (rows) × answering agent (columns)</h3>",
                _heatmap(run), "<h3>Symptoms by route (turns that showed each)</h3>",
                _symptoms(run)]
    else:
        out.append("<p class=meta>Routing labels do not apply to the single agent (it has "
                   "no routes): no matrix; its turns are judged on the answer's labels.</p>")
    out += [_breakdowns(run), _reliability(run),
            f"<h3>Conversations that did not pass ({len(failing)})</h3>"]
    if not failing:
        out.append("<p class=good>Every turn passed.</p>")
    for conv in failing:
        out.append(_conversation(conv, run.repeat))
    out.append("</section>")
    return "".join(out)


def _symptoms(run: EvalRun) -> str:
    per_route = run.symptoms_per_route()
    head = "".join(f"<th>{escape(name)}</th>" for _, name, _ in SYMPTOMS)
    rows = []
    for route in (n for n in run.agents() if n in per_route):
        figures = per_route[route]
        cells = "".join(f"<td data-symptom=\"{key}\">{figures[key]['turns'] or '.'}</td>"
                        for key, _, _ in SYMPTOMS)
        rows.append(f"<tr><th>{escape(route)}</th>"
                    f"<td>{sum(run.matrix[route].values())}</td>{cells}</tr>")
    return (f"<table class=symptoms><thead><tr><th>route</th><th>turns</th>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def _reliability(run: EvalRun) -> str:
    if run.repeat < 2:
        return ""
    ks = shown_ks(run.repeat)
    head = "".join(f"<th>pass^{k}</th>" for k in ks)
    rows = "".join(
        f"<tr><td>{escape(c.case)}</td><td>{c.passed}/{c.trials}</td>"
        + "".join(f"<td>{c.pass_k(k):.2f}</td>" for k in ks) + "</tr>"
        for c in run.reliability() if c.passed < c.trials)
    if not rows:
        return f"<p class=good>Every case passed all {run.repeat} plays.</p>"
    return ("<h3>Cases that did not pass every play</h3><table class=reliability><thead>"
            f"<tr><th>case</th><th>passed</th>{head}</tr></thead><tbody>{rows}</tbody>"
            "</table>")


def _heatmap(run: EvalRun) -> str:
    names = run.agents()
    head = "".join(f"<th class=col>{escape(n)}</th>" for n in names)
    rows = []
    for row in (n for n in names if n in run.matrix):
        counts = run.matrix[row]
        total = sum(counts.values())
        cells = []
        for col in names:
            n = counts.get(col, 0)
            share = n / total if total else 0.0
            right = col == row
            hue = 142 if right else 0
            light = 100 - 55 * share if n else 100
            fg = "#fff" if light < 62 else "#111827"
            label = f"{n} turn{'s' * (n != 1)} for {row} answered by {col}"
            cells.append(f'<td class="cell{" diag" if right else ""}" title="{escape(label)}" '
                         f'data-count="{n}" style="background:hsl({hue},70%,{light:.0f}%);'
                         f'color:{fg}">{n or ""}</td>')
        right_n = counts.get(row, 0)
        rows.append(f"<tr><th>{escape(row)}</th>{''.join(cells)}"
                    f"<td>{right_n}/{total} {_pct(right_n / total if total else 0)}</td></tr>")
    return (f"<table class=heatmap><thead><tr><th>expected \\ answered</th>{head}"
            f"<th>right</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _breakdowns(run: EvalRun) -> str:
    parts = []
    tags = run.per_tag()
    if tags:
        body = "".join(f"<tr><td>{escape(k)}</td><td>{p}/{n}</td><td>{_pct(p / n)}</td></tr>"
                       for k, (p, n) in tags.items())
        parts.append("<h3>By tag</h3><table class=tags><thead><tr><th>tag</th><th>passed"
                     f"</th><th>accuracy</th></tr></thead>{body}</table>")
    for title, counter in (("Refusals by code", run.refusals()),
                           ("Failed turns by code", run.failures())):
        items = "".join(f"<tr><td><code>{escape(k)}</code></td><td>{v}</td></tr>"
                        for k, v in counter.most_common())
        parts.append(f"<h3>{title}</h3>" + (f"<table>{items}</table>" if items
                                            else "<p>none</p>"))
    return "".join(parts)


def _conversation(turns: list[TurnResult], repeat: int) -> str:
    first = turns[0]
    play = f" (play {first.play + 1})" if repeat > 1 else ""
    why = "; ".join(p for t in turns for p in t.problems)
    out = [f'<details class=case data-case="{escape(first.case)}"><summary>'
           f"{escape(first.case)}{play}<span class=why>{escape(_short(why, 140))}</span>"
           "</summary>"]
    for t in turns:
        out.append(_turn(t))
    out.append("</details>")
    return "".join(out)


def _turn(t: TurnResult) -> str:
    facts = [f"expected <b>{escape(' or '.join(t.expected))}</b>, answered by "
             f"<b>{escape(t.agent or 'nobody')}</b> ({escape(t.status)})",
             f"path {escape(' → '.join(t.path) or '(none)')}",
             f"{_n(len(t.calls), 'model call')}, {_secs(t.seconds)}"]
    if t.tools:
        facts.append("tools " + escape(", ".join(t.tools)))
    out = [f'<div class="turn{"" if t.passed else " fail"}">',
           f"<div class=user>turn {t.index + 1}: {escape(t.user)}</div>",
           f"<div class=facts>{' · '.join(facts)}</div>"]
    if t.problems:
        out.append(f"<div class=problems>{escape('; '.join(t.problems))}</div>")
    for times, r in grouped_refusals(t.refusals):
        target = r.get("target") or r.get("tool")
        again = f" ({times} times in a row)" if times > 1 else ""
        out.append(f"<div class=refused>refused{again}: {escape(r['agent'])} → "
                   f"{escape(str(target))}"
                   f" <code>{escape(r['code'])}</code>: {escape(_short(r['message'], 300))}"
                   "</div>")
    if t.output:
        out.append(f"<div class=facts>answer: {escape(_short(t.output, 400))}</div>")
    if t.calls:
        out.append(f"<details class=calls><summary>what each agent saw and did "
                   f"({_n(len(t.calls), 'model call')})</summary>")
        out.extend(_call(c) for c in t.calls)
        out.append("</details>")
    out.append("</div>")
    return "".join(out)


def _call(c: ModelCall) -> str:
    answer = []
    if c.text:
        answer.append(f"<div class=msg><span class=role>answered</span>{escape(c.text)}</div>")
    for call in c.calls:
        answer.append(f"<div class=msg><span class=role>called</span><code>"
                      f"{escape(call['name'])}({escape(call['arguments'])})</code></div>")
    if c.error:
        answer.append(f"<div class=msg refused><span class=role>error</span>"
                      f"{escape(c.error)}</div>")
    saw = "".join(_message(m) for m in c.messages)
    return (f"<div class=call><div class=who>{escape(c.agent)}</div>"
            f"<div class=facts>tools: {escape(', '.join(c.tools) or 'none')}; tool choice "
            f"{escape(c.tool_choice or 'default')}; {c.prompt_bytes} bytes sent</div>"
            f"<details class=saw><summary>what it saw ({_n(len(c.messages), 'message')} and the "
            f"system text)</summary><pre>{escape(c.system)}</pre>{saw}</details>"
            f"{''.join(answer) or '<div class=msg>(empty answer)</div>'}</div>")


def _message(m: dict[str, Any]) -> str:
    kind = m.get("kind", "")
    who = f"{kind} ({m.get('agent', '')})"
    text = m.get("text") or ""
    calls = m.get("tool_calls") or []
    if calls:
        text += "".join(f"\n→ {c['name']}({c['arguments']})" for c in calls)
    if kind == "tool_result":
        who = f"result of {m.get('name')}"
    return (f"<div class=msg><span class=role>{escape(who)}</span>"
            f"{escape(text if isinstance(text, str) else json.dumps(text))}</div>")


def _pct(share: float) -> str:
    return f"{share:.1%}"


def _secs(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"



def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"
