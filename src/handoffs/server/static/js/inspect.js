// The inspector (/inspect): a developer's view of the same sessions. The sessions (list,
// search by id, agent or status), and for one session: what each agent's model was sent
// and answered (`ModelCalls`, recorded with `handoffs serve --inspect`), the state it
// holds (shared memory, handoff_context, the active agent's view), its handoff records
// with payloads, why it moved (the chat page's timeline), and each turn's trace.
// Model calls and state need the operator key; a session's own token shows the rest.
// With the operator key, each turn has "Fork from here": a new session as this one was
// before that turn (POST v1/sessions/{id}/fork), opened in a new tab, and kept with a key
// of its own among this browser's conversations, so the chat page can continue it; each
// model call can be edited and made again, and a fork made from any of its answers
// (js/rerun.js). A bar of turns jumps to each one; on a phone, picking a session scrolls
// to it.

import { call, savedSession } from "./api.js";
import { ModelCalls } from "./calls.js";
import { Connection } from "./connection.js";
import { remember } from "./conversations.js";
import { LIMITS, folded } from "./fold.js";
import { Timeline } from "./timeline.js";
import { TeamInfo, badge, clock, count, el, preview } from "./team.js";

/** The phone layout (app.css): the sessions list stacked above the session. */
const STACKED = window.matchMedia("(max-width: 820px)");

const $ = (sel) => document.querySelector(sel);
const KEY = "handoffs.operatorKey";

const ins = {
  key: null, token: null, team: null, config: null, sessions: [], open: null,
  connection: null, calls: null, timeline: null, events: [], traces: new Map(), timer: null,
};
window.handoffsInspector = ins; // for the browser tests and for curious people

const STATES = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…",
  closed: "offline", signedOut: "signed out", refused: "stopped" };

function setConnection(state) {
  const node = $("#connection");
  node.dataset.state = state === "signedOut" ? "closed" : state;
  node.textContent = STATES[state];
}

function secret() {
  return ins.key || ins.token;
}

// -- the sessions -------------------------------------------------------------------------

async function loadSessions() {
  const status = $("#status-filter").value || undefined;
  const data = await call("GET", "v1/sessions", { token: ins.key, params: { status, limit: 500 } });
  ins.sessions = data.sessions;
  showSessions();
}

function matches(s, words) {
  if (!words) return true;
  const agent = s.active_agent ? ins.team.agent(s.active_agent) : null;
  const hay = [s.id, s.status, s.active_agent, agent && agent.display_name].join(" ").toLowerCase();
  return words.split(/\s+/).every((w) => hay.includes(w));
}

function showSessions() {
  const words = $("#find").value.trim().toLowerCase();
  const status = $("#status-filter").value;
  // The status is applied here too, so a change shows at once, before the store answers.
  const shown = ins.sessions.filter((s) => (!status || s.status === status) && matches(s, words));
  $("#sessions-count").textContent = `(${shown.length})`;
  $("#sessions-empty").hidden = shown.length > 0;
  $("#sessions").replaceChildren(...shown.map((s) => el("li", {
    class: s.id === ins.open ? "current" : "", "data-session": s.id,
  }, el("button", { type: "button", class: "plain", onclick: () => openSession(s.id),
    "aria-current": s.id === ins.open ? "true" : null },
  el("span", { class: "sid" }, s.id), " ",
  s.active_agent ? badge(ins.team, s.active_agent, "small") : null,
  el("span", { class: `status-tag ${s.status}` }, s.status.replaceAll("_", " ")),
  el("span", { class: "muted" }, ` turn ${s.turn} · ${count(s.messages, "message")} · ${clock(s.updated_at)}`)))));
}

// -- one session --------------------------------------------------------------------------

function summary(s) {
  const traces = [...ins.traces].map(([turn, id]) => {
    const url = ins.config.trace_url ? ins.config.trace_url.replace("{trace_id}", id) : null;
    return el("li", {}, `Turn ${turn}: trace `, url
      ? el("a", { href: url, class: "link trace", rel: "noopener noreferrer", target: "_blank" }, id)
      : el("code", { class: "trace" }, id));
  });
  $("#summary").replaceChildren(el("dl", {},
    el("dt", {}, "status"), el("dd", {}, s.status),
    el("dt", {}, "active agent"), el("dd", {}, badge(ins.team, s.active_agent.name || s.active_agent)),
    el("dt", {}, "turns"), el("dd", {}, String(s.turn)),
    el("dt", {}, "messages"), el("dd", {}, String(s.messages))),
  traces.length ? el("ul", { class: "traces" }, ...traces)
    : el("p", { class: "muted" }, "No trace ids: the turns were not traced (OpenTelemetry off)."));
}

function showState(state) {
  if (!state) {
    $("#state").replaceChildren(el("p", { class: "muted" }, "The stored state (shared memory, the "
      + "view, a waiting response) is shown with the operator key."));
    return;
  }
  const handoff = state.shared ? state.shared.handoff_context : undefined;
  const from = state.metadata ? state.metadata.forked_from : undefined;
  $("#state").replaceChildren(el("dl", {},
    ...(from ? [el("dt", {}, "forked from"), el("dd", { class: "forked-from" },
      el("a", { class: "link", href: `inspect#session=${encodeURIComponent(from.session)}` },
        from.session), ` before turn ${from.turn}`)] : []),
    el("dt", {}, "view of the active agent"),
    el("dd", {}, el("code", {}, `${state.view.mode} from ${state.view.start}, pivot ${state.view.pivot}`),
      state.view.record_id ? ` (opened by record ${state.view.record_id})` : ""),
    el("dt", {}, "handoff_context"),
    el("dd", {}, el("pre", { class: "handoff-context", tabindex: "0" }, handoff ? JSON.stringify(handoff, null, 2) : "none")),
    el("dt", {}, "shared memory"),
    el("dd", {}, el("pre", { class: "shared-now", tabindex: "0" }, JSON.stringify(state.shared, null, 2))),
    el("dt", {}, "waiting response"),
    el("dd", {}, state.pending ? el("pre", { tabindex: "0" }, JSON.stringify(state.pending, null, 2)) : "none")));
}

function showRecords(records) {
  const rows = (records || []).map((r) => el("tr", { class: r.accepted ? "accepted" : "refused" },
    el("td", {}, String(r.turn)),
    el("td", {}, badge(ins.team, r.source, "small"), " → ", badge(ins.team, r.target, "small")),
    el("td", {}, ins.team.kind(r.reason, r.source), r.returns ? " · returns" : ""),
    el("td", {}, r.accepted ? "accepted" : el("span", {}, el("code", {}, r.rejection || "refused"),
      el("span", { class: "why", dir: "auto" }, ` ${r.message || ""}`))),
    folded("td", { dir: "auto" }, r.explanation || "", LIMITS.line),
    el("td", {}, r.payload === null || r.payload === undefined ? "–"
      : el("code", { class: "payload" }, preview(r.payload, 400)))));
  // The table scrolls sideways in its own box (reachable by keyboard): a phone's page never.
  $("#records").replaceChildren(rows.length ? el("div", { class: "table-box", tabindex: "0",
    role: "region", "aria-label": "The handoff records, as a table that scrolls sideways" }, el("table", { class: "records-table" },
    el("thead", {}, el("tr", {}, ...["turn", "route", "kind", "outcome", "explanation", "payload"]
      .map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...rows))) : el("p", { class: "muted" }, "No handoff yet."));
}

async function refresh() {
  const id = encodeURIComponent(ins.open);
  const [s, t, state] = await Promise.all([
    call("GET", `v1/sessions/${id}`, { token: secret() }),
    call("GET", `v1/sessions/${id}/transcript`, { token: secret() }),
    ins.key ? call("GET", `v1/sessions/${id}/state`, { token: ins.key }) : Promise.resolve(null),
  ]);
  summary(s);
  turnNav(s.turn);
  ins.calls.setTranscript(t.messages);
  showRecords(t.handoffs);
  showState(state);
  ins.timeline.enrich(t.handoffs);
}

// -- fork from here ----------------------------------------------------------------------

/** Give each turn of the timeline its "Fork from here" (operator key only). */
function forkControls() {
  if (!ins.key) return;
  for (const section of $("#timeline").querySelectorAll("li.turn[data-turn]")) {
    if (section.querySelector(":scope > .fork")) continue;
    const n = Number(section.dataset.turn);
    const button = el("button", { type: "button", class: "fork", "data-turn": String(n),
      title: `A new session holding this one as it was before turn ${n}, opened in a new tab`,
      onclick: () => forkAt(n, button) }, "Fork from here");
    section.insertBefore(button, section.querySelector("ol.events"));
  }
}

/** Fork before turn `n`, with a key of the fork's own kept in this browser (so the chat
 * page lists and continues it); the answer is the server's. */
async function fork(body) {
  const made = await call("POST", `v1/sessions/${encodeURIComponent(ins.open)}/fork`,
    { token: ins.key, body: { ...body, token: true } });
  remember({ id: made.id, token: made.token, at: Date.now(), title: `Fork of ${ins.open}`,
    fork: made.metadata.forked_from });
  return made;
}

async function forkAt(n, button) {
  // The tab is opened in the click itself, so no popup blocker stops it; it is sent to
  // the fork once the server made it (it signs in with this tab's operator key).
  const tab = window.open("", "_blank");
  const note = $("#fork-note");
  button.disabled = true;
  try {
    const made = await fork({ turn: n });
    const target = `inspect#session=${encodeURIComponent(made.id)}`;
    if (tab) tab.location.href = target;
    note.replaceChildren(`Forked before turn ${n} as `,
      el("a", { class: "link", href: target, target: "_blank" }, made.id), " · ",
      el("a", { class: "link", href: `./#session=${encodeURIComponent(made.id)}`,
        target: "_blank" }, "continue it in the chat"), ".");
  } catch (err) {
    if (tab) tab.close();
    note.textContent = `Could not fork before turn ${n}: ${err.code}: ${err.message}`;
  } finally {
    button.disabled = false;
  }
}

/** The chat page, beside this one. */
const ROOT_PAGE = new URL("./", location.href);

/** The operator's actions on the model calls (js/calls.js, js/rerun.js). */
const ACTIONS = {
  fork: (n, button) => forkAt(n, button),
  rerun: (e, edits) => call("POST", `v1/sessions/${encodeURIComponent(ins.open)}/rerun`,
    { token: ins.key, body: { turn: e.turn, call: e.call, line: e.line || "", ...edits } }),
  forkWith: async (e, text) => {
    const tab = window.open("", "_blank"); // in the click, past popup blockers
    try {
      const made = await fork({ turn: e.turn, call: e.call, answer: text });
      const href = new URL(`./#session=${encodeURIComponent(made.id)}`, ROOT_PAGE).href;
      if (tab) tab.location.href = href;
      return { id: made.id, href };
    } catch (err) {
      if (tab) tab.close();
      throw err;
    }
  },
};
/** The bar of turns: one button per turn, jumping to its calls (or its timeline). */
function turnNav(turns) {
  const nav = $("#turn-nav");
  nav.hidden = turns < 1;
  if (Number(nav.dataset.turns) === turns) return;
  nav.dataset.turns = String(turns);
  nav.replaceChildren(el("span", { class: "muted" }, "Jump to"),
    ...Array.from({ length: turns }, (_, i) => i + 1).map((n) => el("button", {
      type: "button", class: "plain-jump", "data-turn": String(n), onclick: () => jump(n) },
    `Turn ${n}`)));
}

function jump(n) {
  const head = document.getElementById(`calls-turn-${n}`)
    || $(`#timeline li.turn[data-turn='${n}'] h3`);
  if (!head) return;
  head.closest("li")?.scrollIntoView({ block: "start" });
  if (head.tabIndex < 0 && head.id) head.focus({ preventScroll: true });
}

function onEvent(e) {
  ins.events.push(e);
  ins.calls.handle(e);
  ins.timeline.handle(e);
  forkControls();
  if (e.type === "run_started" && e.trace_id) ins.traces.set(e.turn, e.trace_id);
  if (e.type === "run_completed" || e.type === "run_failed" || e.type === "agent_changed") {
    clearTimeout(ins.timer);
    ins.timer = setTimeout(() => refresh().catch(() => {}), 150);
  }
}

function startOver() {
  ins.events = [];
  ins.traces = new Map();
  ins.calls.clear();
  ins.timeline.clear();
}

async function openSession(id) {
  ins.connection?.close();
  ins.open = id;
  history.replaceState(null, "", `#session=${encodeURIComponent(id)}`);
  $("#session-title").textContent = `Session ${id}`;
  startOver();
  $("#turn-nav").dataset.turns = "";
  $("#calls-note").textContent = ins.key
    ? (ins.config.inspect ? "" : "This server does not record model calls: start it with "
      + "`handoffs serve --inspect` (or Runner(inspect=True)).")
    : "Model calls are shown with the operator key only.";
  await refresh();
  ins.connection = new Connection(id, secret(), onEvent, setConnection, () => {
    startOver();
    refresh().catch(() => {});
  });
  ins.connection.open();
  if (ins.key) showSessions();
  // On a phone the session is below the list: take the person to what they picked.
  if (STACKED.matches) $("#session-title").scrollIntoView({ block: "start" });
}

// -- signing in ---------------------------------------------------------------------------

function wanted() {
  const m = /session=([^&]+)/.exec(location.hash);
  return m ? decodeURIComponent(m[1]) : null;
}

async function login(key) {
  ins.key = key;
  ins.token = null;
  ins.calls.actions = ACTIONS;
  await loadSessions(); // throws for a wrong key
  sessionStorage.setItem(KEY, key);
  $("#login .error").textContent = "";
  $("#login").hidden = true;
  $("#inspector").hidden = false;
  $(".sessions-box").hidden = false;
  const id = wanted();
  if (id) await openSession(id);
}

async function openOwn() {
  const own = savedSession();
  if (!own) return;
  ins.calls.actions = null;
  ins.key = null;
  ins.token = own.token;
  $("#login").hidden = true;
  $("#inspector").hidden = false;
  $(".sessions-box").hidden = true;
  await openSession(own.id);
}

async function main() {
  setConnection("signedOut");
  const ready = Promise.all([call("GET", "v1/team"), call("GET", "v1/config")]).then(([t, c]) => {
    ins.team = new TeamInfo(t);
    ins.config = c;
    ins.calls = new ModelCalls($("#calls"), ins.team, null);
    ins.timeline = new Timeline($("#timeline"), ins.team);
  });
  $("#login").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await ready;
      await login($("#key").value);
    } catch (err) {
      $("#login .error").textContent = `${err.code}: ${err.message}`;
    }
  });
  $("#search").addEventListener("submit", (ev) => ev.preventDefault());
  $("#find").addEventListener("input", () => showSessions());
  $("#status-filter").addEventListener("change", () => {
    showSessions();
    loadSessions().catch(() => {});
  });
  $("#reload-sessions").addEventListener("click", () => loadSessions().catch(() => {}));
  const own = savedSession();
  if (own) {
    $("#own").hidden = false;
    $("#own").addEventListener("click", async () => {
      await ready;
      openOwn().catch((err) => { $("#login .error").textContent = `${err.code}: ${err.message}`; });
    });
  }
  await ready;
  const saved = sessionStorage.getItem(KEY);
  if (saved) await login(saved).catch(() => sessionStorage.removeItem(KEY));
}

main();
