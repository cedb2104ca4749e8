// The chat page: starts or resumes a session, follows its events, and wires the chat,
// the timeline, the team graph and the agent picker to them. What it shows is what the
// server stores: after any reconnect (a dropped connection, a server that restarted) it
// starts over from the stored log and the session's state, so a turn the server lost is
// shown as interrupted, and none is shown twice.

import { ApiError, call, saveSession, savedSession } from "./api.js";
import { Chat } from "./chat.js";
import { Connection } from "./connection.js";
import { Graph, agentList } from "./graph.js";
import { Picker } from "./picker.js";
import { Timeline } from "./timeline.js";
import { TeamInfo, badge } from "./team.js";
import { notSent } from "./words.js";

const $ = (sel) => document.querySelector(sel);

const page = {
  team: null, session: null, connection: null, chat: null, timeline: null, graph: null,
  picker: null, active: null, events: [], busy: false, sending: false,
  held: null, // events that came while the session's state was read (shown after it)
};
window.handoffsPage = page; // for the browser tests and for curious people

function setStatus(text) {
  $("#status").textContent = text;
}

/** Said once to a screen reader: a whole answer, never its streamed pieces. */
function announce(text) {
  const box = $("#announce");
  box.textContent = "";
  setTimeout(() => { box.textContent = text; }, 30);
}

function setConnection(state) {
  const node = $("#connection");
  node.dataset.state = state;
  node.textContent = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", closed: "offline" }[state];
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
}

function onEvent(e) {
  if (page.held) {
    page.held.push(e);
    return;
  }
  page.events.push(e);
  page.chat.handle(e);
  page.timeline.handle(e);
  if (e.type === "run_started") setBusy(true);
  if (e.type === "agent_changed") setActive(e.agent);
  if (e.type === "agent_handoff") page.graph.took(e.source, e.target);
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
  page.events = [];
  page.graph.reset(active || page.team.entry);
  setBusy(false);
}

/** Read the session's state: who holds it, and whether its last turn was interrupted. */
async function readState() {
  const id = encodeURIComponent(page.session.id);
  const s = await call("GET", `v1/sessions/${id}`, { token: page.session.token });
  const t = await call("GET", `v1/sessions/${id}/transcript`, { token: page.session.token });
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

async function startSession() {
  const s = await call("POST", "v1/sessions", { body: { channel: "web" } });
  page.session = { id: s.id, token: s.token };
  saveSession(page.session);
  return s.active_agent ? s.active_agent.name : page.team.entry;
}

async function openSession(fresh) {
  page.connection?.close();
  page.session = fresh ? null : savedSession();
  let active = page.team.entry;
  let state = null;
  if (page.session) {
    try {
      state = await call("GET", `v1/sessions/${encodeURIComponent(page.session.id)}`,
        { token: page.session.token });
      active = state.active_agent ? state.active_agent.name : active;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status === 0) throw err;
      page.session = null; // gone or not ours any more: start again
    }
  }
  if (!page.session) active = await startSession();
  startOver(active);
  if (state) await withState();
  $("#session-id").textContent = page.session.id;
  $("#inspect-link").href = `inspect#session=${encodeURIComponent(page.session.id)}`;
  setActive(active);
  page.connection = new Connection(page.session.id, page.session.token, onEvent,
    setConnection, resync);
  page.connection.open();
}

async function send(text) {
  page.sending = true;
  setBusy(page.busy);
  $("#send-error").textContent = "";
  try {
    await call("POST", `v1/sessions/${encodeURIComponent(page.session.id)}/messages`, {
      token: page.session.token, body: { text }, headers: { Prefer: "respond-async" },
    });
    // Accepted (stored): only now is the box emptied, unless the user typed on.
    if ($("#text").value.trim() === text) $("#text").value = "";
  } catch (err) {
    $("#send-error").textContent = notSent(err);
  } finally {
    page.sending = false;
    setBusy(page.busy);
  }
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
    if (!text || $("#send").disabled) return;
    if (!page.session || !page.connection) {
      $("#send-error").textContent = notSent({ code: "network_error" });
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

async function main() {
  wire();
  const [teamData, config] = await connect();
  setStatus("");
  page.team = new TeamInfo(teamData);
  $("#model").textContent = config.model ? `Model: ${config.model}` : "";
  page.chat = new Chat($("#messages"), page.team, {
    onStatus: setStatus, onAnnounce: announce, onRetry: (text) => send(text),
    onInterrupted: (turn) => page.timeline.interrupted(turn, true),
  });
  page.timeline = new Timeline($("#timeline"), page.team);
  page.graph = new Graph($("#graph"), page.team);
  agentList($("#agents"), page.team);
  page.picker = new Picker($("#picker"), page.team, () => page.session);
  $("#new-session").addEventListener("click", () => openSession(true));
  for (let attempt = 0; ; attempt++) {
    try {
      await openSession(false);
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
