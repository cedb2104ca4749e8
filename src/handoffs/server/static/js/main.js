// The chat page: starts or resumes a session, follows its events, and wires the chat,
// the timeline, the team graph and the agent picker to them. What it shows is what the
// server stores: after any reconnect (a dropped connection, a server that restarted) it
// starts over from the stored log and the session's state, so a turn the server lost is
// shown as interrupted, and none is shown twice. A conversation is never lost without a
// word: one that cannot be opened (a wrong or stale key, a deleted session, a refused
// event stream) says why and offers a new one; a new one is started only when asked (and
// confirmed); every conversation this browser holds a key for is listed, forks marked.

import { ApiError, call, saveSession, savedSession } from "./api.js";
import { Chat } from "./chat.js";
import { confirmWith } from "./confirm.js";
import { Connection } from "./connection.js";
import { ContextPanel } from "./context.js";
import { conversation, forget, remember, showConversations } from "./conversations.js";
import { Follower } from "./follow.js";
import { Graph, agentList } from "./graph.js";
import { Hooks } from "./hooks.js";
import { Picker } from "./picker.js";
import { Timeline } from "./timeline.js";
import { TeamInfo, badge, el } from "./team.js";
import { cannotOpen, notSent } from "./words.js";

const $ = (sel) => document.querySelector(sel);

const page = {
  team: null, session: null, connection: null, chat: null, timeline: null, graph: null,
  picker: null, context: null, active: null, events: [], busy: false, sending: false,
  held: null, // events that came while the session's state was read (shown after it)
};
window.handoffsPage = page; // for the browser tests and for curious people
const hooks = new Hooks();
/** The page's public hook for a tool's custom events (docs/web.md): `on(name, fn)`. */
window.handoffs = { on: (name, fn) => hooks.on(name, fn), off: (name, fn) => hooks.off(name, fn) };

function setStatus(text) {
  $("#status").textContent = text;
}

/** Said once to a screen reader: a whole answer, never its streamed pieces. */
function announce(text) {
  const box = $("#announce");
  box.textContent = "";
  setTimeout(() => { box.textContent = text; }, 30);
}

const STATES = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…",
  closed: "offline", refused: "stopped" };

function setConnection(state) {
  const node = $("#connection");
  node.dataset.state = state;
  node.textContent = STATES[state];
}

function setActive(name) {
  page.active = name;
  $("#active-agent").replaceChildren(badge(page.team, name));
  page.graph.setActive(name);
  page.picker.setActive(name);
}

/** A turn runs: Send waits for its end (the text box stays usable). */
function setBusy(busy) {
  page.busy = busy;
  $("#send").disabled = busy || page.sending;
  if (!$("#send").disabled) $("#send-hint").textContent = "";
}

function onEvent(e) {
  if (page.held) {
    page.held.push(e);
    return;
  }
  page.events.push(e);
  page.chat.handle(e);
  page.timeline.handle(e);
  if (e.type === "custom_event") hooks.emit(e);
  if (e.type === "run_started" || e.type === "message") $("#welcome").hidden = true;
  if (e.type === "run_started") setBusy(true);
  if (e.type === "agent_changed") setActive(e.agent);
  if (e.type === "agent_handoff") page.graph.took(e.source, e.target);
  if (e.type === "context_changed") page.context.change(e.changed);
  if (e.type === "run_completed" || e.type === "run_failed") {
    setBusy(false);
    refreshRecords();
  }
}

async function refreshRecords() {
  try {
    const t = await call("GET", `v1/sessions/${encodeURIComponent(page.session.id)}/transcript`,
      { token: page.session.token });
    page.timeline.enrich(t.handoffs);
    return t;
  } catch {
    return null; // payload previews are extra; the timeline stands without them
  }
}

/** The messages a crash interrupted, as the transcript shows them: a user's message
 * followed by the runtime's note that it was interrupted (resumed or caught up). */
function interruptedTexts(messages) {
  const out = [];
  for (let i = 0; i + 1 < messages.length; i++) {
    const m = messages[i];
    const next = messages[i + 1];
    if (m.kind === "user" && next.kind === "note" && !next.to_model) out.push(m.text);
  }
  return out;
}

/** Start the view over from the store: the replay that follows fills it in. */
function startOver(active) {
  page.chat.clear();
  page.timeline.clear();
  hooks.clear();
  page.events = [];
  page.graph.reset(active || page.team.entry);
  setBusy(false);
}

/** Read the session's state: who holds it, and whether its last turn was interrupted. */
async function readState() {
  const id = encodeURIComponent(page.session.id);
  const s = await call("GET", `v1/sessions/${id}`, { token: page.session.token });
  const t = await call("GET", `v1/sessions/${id}/transcript`, { token: page.session.token });
  page.context.set(s.context);
  for (const text of interruptedTexts(t.messages)) page.chat.interruptedTexts.add(text);
  if (s.status === "interrupted") {
    const users = t.messages.filter((m) => m.kind === "user");
    const last = users.length ? users[users.length - 1].text : "";
    page.chat.interruptedTexts.add(last);
    page.chat.interrupted(s.turn, last);
    page.timeline.interrupted(s.turn);
  }
  return s;
}

/** Read the state first, holding the replay's events until it is read, so that what
 * the state says (an interrupted message) is known when they are shown. */
async function withState() {
  const held = page.held = [];
  try {
    await readState();
  } catch {
    // The stream is back but a read failed: the events still show what is stored.
  }
  if (page.held !== held) return; // a newer start-over holds the events now
  page.held = null;
  for (const e of held) onEvent(e);
  refreshRecords();
}

function resync() {
  startOver(page.active);
  withState();
}

// -- which conversation ----------------------------------------------------------------

async function startSession() {
  const s = await call("POST", "v1/sessions", { body: { channel: "web" } });
  remember({ id: s.id, token: s.token, at: Date.now() });
  return { entry: { id: s.id, token: s.token }, state: null,
    active: s.active_agent ? s.active_agent.name : page.team.entry };
}

/** Open a conversation: `"new"`, a stored one, or (null) the one this browser showed
 * last; a new one only when there is none at all. */
async function openSession(choice = null) {
  page.connection?.close();
  page.connection = null;
  $("#notice").hidden = true;
  let entry = choice === "new" ? null : choice || savedSession();
  let state = null;
  let active = page.team.entry;
  if (entry) {
    try {
      state = await call("GET", `v1/sessions/${encodeURIComponent(entry.id)}`,
        { token: entry.token });
      active = state.active_agent ? state.active_agent.name : active;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status === 0 || err.status >= 500) throw err;
      unopenable(entry, err);
      return;
    }
  } else {
    ({ entry, state, active } = await startSession());
  }
  page.session = { id: entry.id, token: entry.token };
  saveSession(page.session);
  remember({ id: entry.id, token: entry.token, gone: undefined,
    fork: state?.metadata?.forked_from || conversation(entry.id)?.fork || null });
  startOver(active);
  if (state) await withState();
  else page.context.set((await call("GET", `v1/sessions/${encodeURIComponent(entry.id)}`,
    { token: entry.token }).catch(() => ({}))).context);
  showFork(state?.metadata?.forked_from);
  $("#welcome").hidden = !(state === null || state.messages === 0) || !page.chat.empty;
  $("#session-id").textContent = page.session.id;
  $("#inspect-link").href = `inspect#session=${encodeURIComponent(page.session.id)}`;
  setActive(active);
  drawConversations();
  page.connection = new Connection(page.session.id, page.session.token, onEvent,
    setConnection, resync, (err) => unopenable(page.session, err, true));
  page.connection.open();
}

/** The conversation cannot be opened (or followed): say why, offer a new one. */
function unopenable(entry, err, live = false) {
  page.connection?.close();
  page.connection = null;
  page.session = null;
  remember({ id: entry.id, token: entry.token, gone: err.code });
  startOver(page.team.entry);
  $("#welcome").hidden = true;
  $("#fork-banner").hidden = true;
  $("#session-id").textContent = "";
  setConnection(live ? "refused" : "closed");
  setStatus("");
  $("#notice").replaceChildren(
    el("p", {}, live ? "The live updates of this conversation stopped: " : "",
      `${cannotOpen(err)} (`, el("code", {}, entry.id), `: ${err.code})`),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "start-new", onclick: () => openSession("new") },
        "Start a new conversation")));
  $("#notice").hidden = false;
  drawConversations();
}

function showFork(origin) {
  const banner = $("#fork-banner");
  banner.hidden = !origin;
  if (!origin) return;
  const where = origin.call !== undefined && origin.call !== null
    ? `at model call ${origin.call} of turn ${origin.turn}` : `before turn ${origin.turn}`;
  banner.replaceChildren(el("span", { class: "fork-tag" }, "fork"), " A fork of ",
    el("code", {}, origin.session), ` ${where}: what is said here does not change the `
    + "original.");
}

function drawConversations() {
  showConversations($("#conversations"), {
    current: page.session ? page.session.id : null, el,
    open: (c) => openSession(c).catch((err) => setStatus(`Not opened: ${err.message}`)),
    remove: (c) => removeConversation(c),
  });
}

async function removeConversation(c) {
  const sure = await confirmWith({
    title: "Delete this conversation?",
    text: "It is deleted on the server too, for good; no one can open it again.",
    yes: "Delete it", no: "Keep it",
  });
  if (!sure) return;
  try {
    await call("DELETE", `v1/sessions/${encodeURIComponent(c.id)}`, { token: c.token });
  } catch (err) {
    // Gone already, or this key no longer opens it: there is nothing left to delete here.
    if (!(err instanceof ApiError) || ![401, 403, 404].includes(err.status)) {
      setStatus(`Not deleted: ${err.message}`);
      return;
    }
  }
  forget(c.id);
  if (page.session && page.session.id === c.id) {
    page.session = null;
    await openSession("new");
  } else {
    drawConversations();
  }
}

async function newConversation() {
  const sure = await confirmWith({
    title: "Start a new conversation?",
    text: "This one stays under Your conversations, so you can come back to it.",
    yes: "Start a new conversation", no: "Cancel",
  });
  if (sure) await openSession("new");
}

// -- sending ---------------------------------------------------------------------------

async function send(text) {
  page.sending = true;
  setBusy(page.busy);
  $("#send-error").textContent = "";
  $("#welcome").hidden = true;
  try {
    await call("POST", `v1/sessions/${encodeURIComponent(page.session.id)}/messages`, {
      token: page.session.token, body: { text }, headers: { Prefer: "respond-async" },
    });
    // Accepted (stored): only now is the box emptied, unless the user typed on.
    if ($("#text").value.trim() === text) $("#text").value = "";
    if (!conversation(page.session.id)?.title) remember({ id: page.session.id, title: text.slice(0, 80) });
    drawConversations();
  } catch (err) {
    $("#send-error").textContent = notSent(err);
  } finally {
    page.sending = false;
    setBusy(page.busy);
  }
}

/** Why Send does nothing now (said when Enter is pressed while it is disabled). */
function whyNotNow() {
  if (page.sending) return "Your last message is being sent; this one stays in the box.";
  const who = page.active ? page.team.label(page.active) : "The team";
  return `${who} is still answering; your message stays in the box until Send is back.`;
}

function welcome() {
  $("#hello").textContent = `Hello! ${page.team.label(page.team.entry)} answers first and `
    + "brings in whoever can help. What can we do for you?";
  $("#prompts").replaceChildren(...page.team.prompts.map((p) => el("li", {},
    el("button", { type: "button", class: "prompt", dir: "auto", onclick: () => {
      $("#text").value = p;
      $("#composer").requestSubmit();
    } }, p))));
}

/** The team and the server's settings, retried until the server answers. */
async function connect() {
  for (let attempt = 0; ; attempt++) {
    try {
      return await Promise.all([call("GET", "v1/team"), call("GET", "v1/config")]);
    } catch (err) {
      const wait = Math.min(10, 2 ** attempt);
      setConnection("closed");
      setStatus(`The server can't be reached. Trying again in ${wait} s…`);
      await new Promise((r) => setTimeout(r, wait * 1000));
    }
  }
}

function wire() {
  // The composer answers from the first moment: a message typed before the page is
  // connected is kept, and says so, rather than reloading the page.
  $("#composer").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("#text").value.trim();
    if (!text) return;
    if ($("#send").disabled) {
      $("#send-hint").textContent = whyNotNow();
      return;
    }
    if (!page.session || !page.connection) {
      const gone = !$("#notice").hidden;
      $("#send-error").textContent = notSent({ code: gone ? "forbidden" : "network_error" });
      return;
    }
    send(text);
  });
  $("#text").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) {
      ev.preventDefault();
      $("#composer").requestSubmit();
    }
  });
  $("#picker").addEventListener("submit", (ev) => ev.preventDefault());
}

/** The conversation a link names (`#session=<id>`, one this browser holds), or null. */
function linked() {
  const m = /session=([^&]+)/.exec(location.hash);
  if (!m) return null;
  history.replaceState(null, "", location.pathname + location.search);
  return conversation(decodeURIComponent(m[1]));
}

async function main() {
  wire();
  const [teamData, config] = await connect();
  setStatus("");
  page.team = new TeamInfo(teamData);
  $("#model").textContent = config.model ? `Model: ${config.model}` : "";
  page.chat = new Chat($("#messages"), page.team, {
    onStatus: setStatus, onAnnounce: announce, onRetry: (text) => send(text),
    onInterrupted: (turn) => page.timeline.interrupted(turn, true),
    follower: new Follower($("#messages"), $("#new-below")),
  });
  page.context = new ContextPanel($("#context-box"), $("#session-context"));
  page.timeline = new Timeline($("#timeline"), page.team);
  page.graph = new Graph($("#graph"), page.team);
  agentList($("#agents"), page.team);
  page.picker = new Picker($("#picker"), page.team, () => page.session);
  welcome();
  $("#new-session").addEventListener("click", () => newConversation());
  const first = linked();
  for (let attempt = 0; ; attempt++) {
    try {
      await openSession(first);
      return;
    } catch (err) {
      const wait = Math.min(10, 2 ** attempt);
      setStatus(`The conversation could not be opened (${err.message}). Trying again in ${wait} s…`);
      await new Promise((r) => setTimeout(r, wait * 1000));
    }
  }
}

main().catch((err) => {
  setStatus(`The page could not start: ${err.message}`);
  document.body.dataset.failed = "true";
});
