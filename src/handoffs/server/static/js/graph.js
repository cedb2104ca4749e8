// The team drawn as a graph (SVG) from GET /v1/team: agents in rows by their distance
// from the entry agent, routes as arrows (solid: transfer, dashed: delegation, dotted:
// next-turn transfer). The active agent is highlighted and named "active"; the routes this
// conversation took are drawn thick and numbered in the order they were taken.

import { el } from "./team.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 150;
const H = 44;
const GAP_X = 16;
const GAP_Y = 58;

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    // Styles through the CSSOM: the page's CSP refuses style attributes.
    if (k === "style") for (const [prop, value] of Object.entries(v)) node.style.setProperty(prop, value);
    else node.setAttribute(k, v);
  }
  for (const c of children) {
    if (c !== null) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const NAME_X = 32; // where a node's name starts (its icon is before it)
const NAME_W = W - NAME_X - 6; // the room for the name

/** A node's name, squeezed to fit its box when long (never cut: the whole name shows). */
function nameText(name, y) {
  const shown = name.length > 26 ? name.slice(0, 25) + "…" : name;
  const t = svg("text", { x: NAME_X, y, class: "label" }, shown);
  if (shown.length * 7.6 > NAME_W) {
    t.setAttribute("textLength", NAME_W);
    t.setAttribute("lengthAdjust", "spacingAndGlyphs");
  }
  return t;
}

export class Graph {
  constructor(container, team) {
    this.container = container;
    this.team = team;
    this.active = team.entry;
    this.path = []; // [source, target] of accepted handoffs, in order
    this.layout();
    this.draw();
  }

  layout() {
    const depth = new Map([[this.team.entry, 0]]);
    const queue = [this.team.entry];
    while (queue.length) {
      const a = queue.shift();
      for (const r of this.team.routes) {
        if (r.source === a && !depth.has(r.target)) {
          depth.set(r.target, depth.get(a) + 1);
          queue.push(r.target);
        }
      }
    }
    let max = Math.max(0, ...depth.values());
    for (const name of this.team.agents.keys()) if (!depth.has(name)) depth.set(name, max + 1);
    max = Math.max(0, ...depth.values());
    const rows = Array.from({ length: max + 1 }, () => []);
    for (const name of this.team.agents.keys()) rows[depth.get(name)].push(name);
    const widest = Math.max(...rows.map((r) => r.length));
    this.width = widest * (W + GAP_X) + GAP_X;
    this.height = rows.length * (H + GAP_Y) + GAP_Y / 2;
    this.pos = new Map();
    rows.forEach((row, y) => {
      const offset = (this.width - row.length * (W + GAP_X) + GAP_X) / 2;
      row.forEach((name, x) => this.pos.set(name, {
        x: offset + x * (W + GAP_X), y: GAP_Y / 2 + y * (H + GAP_Y),
      }));
    });
  }

  setActive(name) {
    this.active = name;
    this.draw();
  }

  took(source, target) {
    this.path.push([source, target]);
    this.draw();
  }

  reset(active) {
    this.path = [];
    this.active = active || this.team.entry;
    this.draw();
  }

  edge(r, taken) {
    const a = this.pos.get(r.source);
    const b = this.pos.get(r.target);
    if (!a || !b) return null;
    const ax = a.x + W / 2;
    const bx = b.x + W / 2;
    const down = b.y > a.y;
    const same = b.y === a.y;
    const ay = same ? a.y + H / 2 : down ? a.y + H : a.y;
    const by = same ? b.y + H / 2 : down ? b.y : b.y + H;
    // Two routes between the same pair bend to opposite sides, so both stay visible.
    const back = this.team.route(r.target, r.source) !== null;
    const bend = back ? (down ? 14 : -14) : 0;
    const sx = same ? (bx > ax ? ax + W / 2 : ax - W / 2) : ax + bend;
    const ex = same ? (bx > ax ? bx - W / 2 : bx + W / 2) : bx + bend;
    const mx = (sx + ex) / 2 + bend * 2;
    const my = same ? ay - 30 : (ay + by) / 2;
    const cls = `route ${r.kind}${taken.length ? " taken" : ""}`;
    const g = svg("g", { class: cls, "data-source": r.source, "data-target": r.target },
      svg("title", {}, `${this.team.label(r.source)} → ${this.team.label(r.target)} (${r.kind})`),
      svg("path", { d: `M${sx},${ay} Q${mx},${my} ${ex},${by}`, "marker-end": taken.length ? "url(#arrow-taken)" : "url(#arrow)" }));
    if (taken.length) {
      const lx = (sx + 2 * mx + ex) / 4;
      const ly = (ay + 2 * my + by) / 4;
      const label = taken.join(",");
      const w = Math.max(18, label.length * 7 + 8);
      g.append(svg("rect", { x: lx - w / 2, y: ly - 9, width: w, height: 18, rx: 9, class: "step-no" }),
        svg("text", { x: lx, y: ly + 4, "text-anchor": "middle", class: "step-no" }, label));
    }
    return g;
  }

  draw() {
    const defs = svg("defs", {},
      ...[["arrow", ""], ["arrow-taken", "taken"]].map(([id, cls]) => svg("marker", {
        id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9,
        markerUnits: "userSpaceOnUse", orient: "auto-start-reverse",
      }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: `arrowhead ${cls}` }))));
    const root = svg("svg", {
      viewBox: `0 0 ${this.width} ${this.height}`, role: "img", class: "graph",
      "aria-label": `The team: ${this.team.agents.size} agents; ${this.team.label(this.active)} is active.`,
    }, defs);
    for (const r of this.team.routes) {
      const taken = [];
      this.path.forEach(([s, t], i) => { if (s === r.source && t === r.target) taken.push(i + 1); });
      const g = this.edge(r, taken);
      if (g) root.append(g);
    }
    for (const [name, p] of this.pos) {
      const a = this.team.agent(name);
      const active = name === this.active;
      const visited = this.path.some(([s, t]) => s === name || t === name);
      root.append(svg("g", {
        class: `node${active ? " active" : ""}${visited ? " visited" : ""}${a.human ? " human" : ""}`,
        "data-agent": name, "aria-current": active ? "true" : null,
        style: { "--agent-color": a.color || "#6b7280" },
        transform: `translate(${p.x},${p.y})`,
      },
      svg("title", {}, `${this.team.label(name)}${a.description ? ": " + a.description : ""}`),
      svg("rect", { width: W, height: H, rx: 10 }),
      svg("rect", { width: 6, height: H, rx: 3, class: "stripe" }),
      a.icon ? svg("text", { x: 12, y: active ? 19 : 27, class: "icon", "aria-hidden": "true" }, a.icon) : null,
      nameText(a.display_name || name, active ? 19 : 27),
      ...(active ? [svg("text", { x: NAME_X, y: 35, class: "active-label" }, "● active")] : [])));
    }
    this.container.replaceChildren(root);
  }
}

/** The team's agents with their descriptions, as a list (what the graph shows, in text). */
export function agentList(list, team) {
  list.replaceChildren(...[...team.agents.values()].map((a) => el("li", {
    "data-agent": a.name, style: { "--agent-color": a.color || "#6b7280" },
  }, el("strong", {}, team.label(a.name)),
  a.human ? el("span", { class: "tag" }, "human") : null,
  a.entry ? el("span", { class: "tag" }, "entry") : null,
  !a.user_selectable ? el("span", { class: "tag" }, "not pickable") : null,
  a.description ? el("span", { class: "desc" }, a.description) : null)));
}
