"""Figures and Markdown for the traffic benchmark (stdlib only; used by run.py and compare.py).

Input: the results of `bench/traffic/run.py` (``{"meta", "rows", "runs"}``), where every run
is one driver process against its own server, and holds per conversation what the server
received (calls, bytes, per turn) and the driver's per-turn wall times.
"""

from __future__ import annotations

import statistics
from typing import Any

BASELINE = "handoffs:own_tools"
"""Our default history view: the row the others are compared with."""


def _median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def summarise(res: dict[str, Any]) -> dict[str, Any]:
    """Per row: the conversation's traffic (calls, bytes, tokens) and the turn wall time."""
    out: dict[str, Any] = {}
    for row in res["rows"]:
        key = row["key"]
        runs = [r for r in res["runs"] if r["row"] == key]
        ok = [r for r in runs if r["status"] == "ok"]
        s: dict[str, Any] = {"label": row["label"], "runs": len(runs), "ok": len(ok),
                             "failed": [r for r in runs if r["status"] != "ok"]}
        out[key] = s
        if not ok:
            continue
        convs = [c for r in ok for c in r["conversations"]]
        calls = sorted({c["calls"] for c in convs})
        s["calls"] = calls[0] if len(calls) == 1 else None
        s["calls_range"] = [calls[0], calls[-1]]
        for f in ("bytes", "compact_bytes", "handoffs", "handed_off", "summaries",
                  "big_result_copies", "max_request_bytes"):
            s[f] = _median([c[f] for c in convs])
        s["bytes_per_call"] = s["bytes"] / _median([c["calls"] for c in convs])
        s["parts"] = {p: _median([c["parts"][p] for c in convs]) for p in convs[0]["parts"]}
        s["turn_calls"] = [_median([c["turn_calls"][k] for c in convs]) for k in range(6)]
        s["turn_bytes"] = [_median([c["turn_bytes"][k] for c in convs]) for k in range(6)]
        toks = [r["tokens"] for r in ok if r.get("tokens")]
        if toks:
            s["tokens"] = toks[0]["total"]
            s["tokens_per_call"] = toks[0]["total"] / toks[0]["calls"]
            s["turn_tokens"] = toks[0]["per_turn"]
        per_run = [r["turn_median_s"] for r in ok if r.get("turn_median_s") is not None]
        if per_run:
            s["turn_s"] = {"median": _median(per_run), "min": min(per_run),
                           "max": max(per_run), "n": len(per_run)}
        s["versions"] = ok[0]["driver"].get("version")
    base = out.get(BASELINE, {})
    for s in out.values():
        if base.get("bytes") and s.get("bytes"):
            s["bytes_vs_baseline"] = s["bytes"] / base["bytes"]
        if base.get("tokens") and s.get("tokens"):
            s["tokens_vs_baseline"] = s["tokens"] / base["tokens"]
    return out


# -- formatting --------------------------------------------------------------------------------


def kb(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v / 1000:.1f} KB" if v >= 1000 else f"{v:.0f} B"


def ms(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v * 1e3:.1f} ms" if v < 1 else f"{v:.2f} s"


def ratio(v: float | None) -> str:
    return "" if v is None else f" (×{v:.2f})"


def table(summary: dict[str, Any], tokens_note: str) -> str:
    tok_head = "prompt tokens, total | tokens / call" if tokens_note == "" else \
        "prompt tokens | tokens / call"
    lines = [f"| framework (history view) | model calls | handoff calls | request bytes, total "
             f"(× handoffs own_tools) | bytes / call | largest request | {tok_head} | "
             "2 KB tool result sent again | wall time / turn, median (min–max) |",
             "|" + " --- |" * 10]
    for s in summary.values():
        if not s.get("ok"):
            why = "; ".join(f"round {r['round']}: {r['status']}" for r in s["failed"]) \
                or "not run"
            lines.append(f"| {s['label']} | **failed** ({why}) |" + " |" * 8)
            continue
        calls = str(s["calls"]) if s["calls"] is not None else \
            f"{s['calls_range'][0]}–{s['calls_range'][1]}"
        extra = []
        if s["handed_off"]:
            extra.append(f"+{s['handed_off']:.0f} after-handoff")
        if s["summaries"]:
            extra.append(f"+{s['summaries']:.0f} summaries")
        if extra:
            calls += f" ({', '.join(extra)})"
        t = s.get("turn_s")
        turn = f"{ms(t['median'])} ({ms(t['min'])}–{ms(t['max'])})" if t else "n/a"
        if t and turn.count(" ms") == 3:
            turn = f"{t['median'] * 1e3:.1f} ms ({t['min'] * 1e3:.1f}–{t['max'] * 1e3:.1f})"
        tokens = (f"{s['tokens']:,} | {s['tokens_per_call']:,.0f}" if s.get("tokens")
                  else "n/a | n/a")
        lines.append(
            f"| {s['label']} | {calls} | {s['handoffs']:.0f} | "
            f"{kb(s['bytes'])}{ratio(s.get('bytes_vs_baseline'))} | {kb(s['bytes_per_call'])} | "
            f"{kb(s['max_request_bytes'])} | {tokens} | {s['big_result_copies']:.0f} | "
            f"{turn} |")
    return "\n".join(lines)


def turn_table(summary: dict[str, Any]) -> str:
    lines = ["| framework (history view) | " + " | ".join(f"turn {k + 1}" for k in range(6))
             + " |", "|" + " --- |" * 7]
    for s in summary.values():
        if not s.get("ok"):
            continue
        cells = [f"{s['turn_calls'][k]:.0f} / {kb(s['turn_bytes'][k])}" for k in range(6)]
        lines.append(f"| {s['label']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tokens_note(res: dict[str, Any]) -> str:
    """'' when tokens were counted, else the sentence saying why not."""
    tok = res["meta"].get("tokenizer") or {}
    if tok.get("ok"):
        return ""
    return (f"Tokens were not counted in this run ({tok.get('why', 'no tokenizer')}): "
            "bytes only.")


def verdict(summary: dict[str, Any]) -> str:
    """One sentence on the traffic result (for compare.py's summary and the README)."""
    base = summary.get(BASELINE, {})
    peers = {k: s for k, s in summary.items()
             if not k.startswith("handoffs") and s.get("bytes")}
    if not base.get("bytes") or not peers:
        return ""
    lo = min(peers, key=lambda k: peers[k]["bytes"])
    hi = max(peers, key=lambda k: peers[k]["bytes"])
    ours = {k: s for k, s in summary.items() if k.startswith("handoffs") and s.get("bytes")}
    small = min(ours, key=lambda k: ours[k]["bytes"])
    less = [s["label"] for s in peers.values() if s["bytes"] < base["bytes"]]
    text = (f"model traffic, six-turn conversation: handoffs (own_tools, the default view) sends "
            f"{kb(base['bytes'])} in {base['calls']} calls; the peers send "
            f"{kb(peers[lo]['bytes'])} ({peers[lo]['label']}) to "
            f"{kb(peers[hi]['bytes'])} ({peers[hi]['label']}); "
            f"our smallest view, {ours[small]['label']}, {kb(ours[small]['bytes'])}.")
    if less:
        text += f" Less than handoffs (own_tools): {', '.join(less)} (see why below)."
    return text


def parts_table(summary: dict[str, Any]) -> str:
    lines = ["| framework (history view) | system text | tool definitions | other messages | "
             "rest of the body | total (compact JSON) |", "|" + " --- |" * 6]
    for s in summary.values():
        if not s.get("ok"):
            continue
        p = s["parts"]
        lines.append(f"| {s['label']} | {kb(p['system'])} | {kb(p['tools'])} | "
                     f"{kb(p['messages'])} | {kb(p['other'])} | {kb(s['compact_bytes'])} |")
    return "\n".join(lines)


# Why a peer's requests differ from ours: what the recorded request bodies show (the request
# files beside the results hold them). Each is used only when the figures say "less" or "more".
WHY_LESS = {
    "autogen": (
        "each `AssistantAgent` keeps its own model context, and the Swarm passes only chat "
        "messages between agents: the user's messages, the agents' text answers and the "
        "handoff notes (\"Transferred to billing, adopting the role of billing "
        "immediately.\"), all as user messages. An agent's tool calls and tool results stay "
        "in its own context, so shipping never receives billing's 2 KB invoice list; our "
        "default view, `own_tools`, keeps tool traffic with its agent the same way."),
    "strands": (
        "a Swarm remembers nothing between turns: every `invoke_async` starts at the entry "
        "agent and resets every agent's messages, so each request carries only this turn's "
        "message, wrapped in Strands' context text (the handoff message, the agents that "
        "worked on it, the other agents' descriptions). Each request is small, but it takes "
        "more calls (triage routes every turn again, and an agent that hands off is asked "
        "once more before the Swarm moves on), and a real model would answer turn 2 (\"Yes, "
        "please refund the duplicate charge.\") in billing without knowing which charge."),
    "openai-agents": (
        "it replays the conversation as it is; it would send less only through a smaller "
        "history (it has `input_filter`s on handoffs for that)."),
    "langgraph": "its agents see the swarm's one shared message list.",
    "adk": "it shares every agent's events with every other agent.",
}
WHY_MORE = {
    "openai-agents": (
        "every accepted handoff stays in the history as a function call and its output "
        "(`{\"assistant\": \"billing\"}`) and is sent again in every later request; its tool "
        "schemas are strict (`title`s, `additionalProperties: false`, `strict: true`) and "
        "its handoff descriptions longer."),
    "langgraph": (
        "the swarm's agents share one message list, in which every handoff stays as a tool "
        "call and a `ToolMessage` (\"Successfully transferred to billing\") sent again in "
        "every later request."),
    "adk": (
        "every other agent's event (tool call, tool result, text) is sent again as a "
        "separate user message opening with a 400-byte \"For context: ...\" preamble; tool "
        "results are Python reprs inside that text (the 2 KB JSON escaped once more); and "
        "each agent's system text carries ADK's transfer guide listing the other agents."),
    "strands": (
        "it makes 20 calls where the others make 11: a Swarm remembers nothing between "
        "turns, so triage routes every turn again, and an agent that hands off is asked "
        "once more before the Swarm moves on; each request carries Strands' context text "
        "(the handoff message, the agents that worked on it, the other agents' "
        "descriptions), and a real model would answer turn 2 in billing without knowing "
        "which charge."),
    "autogen": (
        "each handoff stays in the thread as a user message (\"Transferred to billing, "
        "adopting the role of billing immediately.\") sent again in every later request, "
        "and its tool descriptions are the whole docstrings; it sends no tool definitions "
        "when it asks the model to word a tool's result (`reflect_on_tool_use`), and its "
        "system text is the agent's instructions alone."),
}


def why_section(summary: dict[str, Any]) -> str:
    base = summary.get(BASELINE, {})
    if not base.get("bytes"):
        return ""
    less, more = [], []
    for key, s in summary.items():
        if key.startswith("handoffs") or not s.get("bytes"):
            continue
        r = s["bytes"] / base["bytes"]
        if r < 1 and key in WHY_LESS:
            less.append(f"- **{s['label']}** sends ×{r:.2f} of our bytes "
                        f"({kb(s['bytes'])} in {s['calls']} calls): {WHY_LESS[key]}")
        elif r >= 1 and key in WHY_MORE:
            more.append(f"- **{s['label']}**, ×{r:.2f} ({kb(s['bytes'])}): {WHY_MORE[key]}")
    ours = []
    for view in ("full", "conversation", "last_user", "summary"):
        s = summary.get(f"handoffs:{view}", {})
        if s.get("bytes"):
            beats = [p["label"] for k, p in summary.items()
                     if not k.startswith("handoffs") and p.get("bytes")
                     and p["bytes"] < s["bytes"]]
            ours.append(f"`{view}` ×{s['bytes'] / base['bytes']:.2f} ({kb(s['bytes'])}"
                        + (f"; still more than {', '.join(beats)}" if beats else "") + ")")
    out = ["### Where a peer sends less than we do, and why", ""]
    if less:
        out += ["Against handoffs with its default view, `own_tools` (each agent sees the "
                "conversation and its own tool calls and results, not other agents'; accepted "
                "handoff calls are never replayed):", "", *less, ""]
    else:
        out += ["No peer sends less than handoffs with its default view, `own_tools` (each "
                "agent sees the conversation and its own tool calls and results, not other "
                "agents'; accepted handoff calls are never replayed).", ""]
    if ours:
        out += ["Our other views, on the same routes: " + "; ".join(ours) + ". `own_tools` "
                "is the default: what a target needs of the source's findings comes with the "
                "handoff's reason and payload, and a route whose target needs every earlier "
                "tool result says `Handoff(..., history=\"full\")` (the default until issue "
                "32; `Runner(history=\"full\")` for every route).", ""]
    if more:
        out += ["Where a peer sends more:", "", *more, ""]
    return "\n".join(out)


def _n(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def section(traffic: dict[str, Any] | None, chart: bool) -> str:
    """The Markdown section of docs/benchmarks.md (compare.py), from run.py's results."""
    if not traffic:
        return ""
    if traffic.get("status") != "ok" and not traffic.get("summary"):
        return ("## (f) Model traffic through one OpenAI-compatible server\n\n"
                f"The traffic run failed: `{traffic.get('error', '')}`\n")
    meta, summary = traffic["meta"], traffic["summary"]
    note = tokens_note({"meta": meta})
    tok = meta.get("tokenizer") or {}
    tokens_how = note or (
        f"Prompt tokens: tiktoken {tok.get('tiktoken')} `{tok.get('encoding')}` (the GPT-4o / "
        "GPT-4.1 encoding, loaded offline: see `bench/traffic/tokens.py`), one conversation, "
        "an estimate by one formula for everyone (OpenAI's cookbook count for messages, tool "
        "definitions as compact JSON).")
    versions = ", ".join(f"{s['label'].split(' (')[0]} {s['versions']}"
                         for k, s in summary.items()
                         if s.get("versions") and (k == BASELINE or ":" not in k))
    left = meta.get("left_out") or []
    failed = [f"{s['label']} (round {r['round']}: {r['status']}: "
              f"`{(r.get('error') or '').splitlines()[-1:]}`)"
              for s in summary.values() for r in s.get("failed", [])]
    chart_md = ("![(f) request bytes per conversation, and per turn](img/bench_traffic.png)\n\n"
                if chart else "")
    v = verdict(summary)
    return f"""## (f) Model traffic through one OpenAI-compatible server

Every framework plays the same six-turn customer-support conversation against the same local
server, each through its own OpenAI client and model class pointed at the server's URL, so
nothing is converted by us.

- Server: `bench/traffic/server.py`, OpenAI Chat Completions on 127.0.0.1, a scripted model,
  every request body recorded.
- Scenario: three agents (triage, billing, shipping), two ordinary tools (`lookup_invoices`,
  whose result is 2 KB of JSON, and `track_package`), three handoffs (triage → billing in
  turn 1; billing → triage → shipping in turn 3), the same six user messages and the same
  model decisions for everyone: the server tells the agent by its instructions in the system
  text and the turn by the user's message, and answers from one plan
  (`bench/traffic/README.md`, `bench/traffic/scenario.py`).
- Checks: every turn's answer and answering agent, from each framework's own result.
- Runs: {_n(meta['rounds'], 'round')} × {_n(meta['reps'], 'conversation')} per row, rows
  interleaved. The traffic figures are per conversation (the same in every conversation).
  The wall time is per user turn, HTTP hops to the server included, the first conversation
  of each run not timed: median over rounds of each run's median (min–max over rounds).
- {tokens_how}
{(chr(10) + "In this run: " + v + chr(10)) if v else ""}
{table(summary, note)}

{chart_md}Model calls / request bytes per turn (one conversation):

{turn_table(summary)}

Where the bytes go (one conversation, compact JSON, so whitespace differences between the
clients' encoders drop out):

{parts_table(summary)}

{why_section(summary)}
Notes: "handoff calls" are the model's calls of a handoff tool; "+N after-handoff" are the
extra calls Strands makes when an agent that handed off is asked again; "+N summaries" are
the calls our `summary` view makes to write them (with the source agent's model, the same
server). "2 KB tool result sent again" counts the requests after the tool call that carry
`lookup_invoices`' result. The wall time is dominated by each client's HTTP stack, not by
the frameworks' orchestration (figures (a)–(b)): Strands' `OpenAIModel` opens a new
`AsyncOpenAI` client, and so a new connection, for every request (as its code says, to avoid
sharing connections across event loops), which is most of its time per turn.
Versions: {versions}.
{("Left out (not installed): " + ", ".join(left) + ".") if left else ""}
{("**Failed runs:** " + "; ".join(failed)) if failed else ""}
Raw: `{traffic.get('results_file', '')}` (every run), `{traffic.get('requests_file', '')}`
(the request bodies of one conversation per row).
"""
