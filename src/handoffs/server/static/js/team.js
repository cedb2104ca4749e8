// The team as the page knows it (from GET /v1/team), and how an agent is shown:
// icon, display name and colour, always with the name in text (colour is never the
// only signal).

export class TeamInfo {
  constructor(data) {
    this.entry = data.entry;
    this.agents = new Map((data.agents || []).map((a) => [a.name, a]));
    this.routes = data.routes || [];
    /** What a user may start with (`Team(suggested_prompts=...)`). */
    this.prompts = data.suggested_prompts || [];
    /** True: while a person holds the conversation, the user cannot pick another agent
     * (`HandoffPolicy(person_keeps_conversation=True)`). */
    this.personKeeps = Boolean(data.person_keeps_conversation);
  }

  agent(name) {
    return this.agents.get(name) || { name, display_name: name, icon: null, color: null };
  }

  label(name) {
    const a = this.agent(name);
    return `${a.icon ? a.icon + " " : ""}${a.display_name || name}`;
  }

  route(source, target) {
    return this.routes.find((r) => r.source === source && r.target === target) || null;
  }

  /** The agents a user may pick, in team order, as the server says (a human agent
   * only when the team lets users pick it). */
  selectable() {
    return [...this.agents.values()].filter((a) => a.user_selectable);
  }

  /** How a handoff came about, in words (the same in the chat, the timeline and the
   * console): its kind, and who decided. */
  kind(reason, source) {
    if (reason === "programmatic" && this.agent(source).human) return "handed back by a person";
    return KINDS[reason] || reason;
  }
}

const KINDS = {
  llm: "chosen by the agent", programmatic: "by code", user_request: "picked by the user",
  error_recovery: "after a failure", plan_step: "plan step", escalation: "escalation",
  capability_match: "by capability", clarification: "for a clarification",
};

/** An element, with attributes and children (strings become text, never HTML). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "style" && typeof v === "object") {
      for (const [prop, value] of Object.entries(v)) node.style.setProperty(prop, value);
    }
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

/** An agent's badge: icon, display name, and its colour as a border. */
export function badge(team, name, extra = "") {
  const a = team.agent(name);
  return el("span", {
    class: `badge ${extra}`.trim(), "data-agent": name,
    style: { "--agent-color": a.color || "#6b7280" },
  }, a.icon ? el("span", { class: "icon", "aria-hidden": "true" }, a.icon) : null,
  el("span", { class: "name" }, a.display_name || name));
}

export function clock(at) {
  return new Date(at * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function ms(seconds) {
  const v = seconds * 1000;
  return v < 10 ? `${v.toFixed(1)} ms` : v < 10000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`;
}

/** "1 message", "2 messages": a count with its noun. */
export function count(n, noun, plural = `${noun}s`) {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** How long, in words a person reads at a glance: "45 s", "3 min", "2 h 5 min". */
export function waited(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** A short preview of any JSON value. */
export function preview(value, max = 160) {
  if (value === undefined || value === null || value === "") return "";
  const s = typeof value === "string" ? value : JSON.stringify(value);
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}
