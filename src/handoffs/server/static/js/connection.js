// A session's live event stream (SSE) that survives dropped connections and restarts.
//
// Every event carries `seq`, its number in the session's event log; an event at or below
// the last one delivered is dropped, so none shows twice. The first connection replays
// the stored log from its start. A reconnect replays it again from the start (`onResync`
// is called first, so the page starts its view over): a server that restarted may have
// lost the events of a turn it was running, and the page must show what the store holds,
// not what it saw live. The replay includes the running turn's events so far.
//
// A stream the server refuses (a wrong or stale key, a session that is gone: a 4xx) is
// not retried forever: after a failed connection the same URL is asked once with
// fetch, which, unlike EventSource, sees the answer's status and error; a refusal stops
// the reconnecting and is handed to `onRefused`. A server that cannot be reached, or
// answers 5xx or 429, is retried.

import { ApiError, url } from "./api.js";

const EVENT_TYPES = [
  "run_started", "agent_started", "text_delta", "message", "tool_called", "tool_result",
  "tool_progress", "custom_event", "handoff_requested", "handoff_rejected", "agent_handoff",
  "agent_changed", "agent_returned", "guardrail_checked", "guardrail_tripped", "human_waiting",
  "approval_requested",
  "approval_decided", "remote_status", "plan_step_started", "plan_step_completed",
  "max_steps_reached",
  "agent_nudged", "answer_truncated", "run_completed", "run_failed", "run_interrupted",
  "context_changed", "model_request",
  "model_response",
];

export class Connection {
  /**
   * @param {string} sessionId
   * @param {string} token the session's token or the operator key
   * @param {(event: object) => void} onEvent called once per event, in order
   * @param {(state: "connecting"|"live"|"reconnecting"|"closed") => void} onState
   * @param {() => void} onResync called when a reconnect replays the log from its start
   * @param {(err: ApiError) => void} onRefused called once when the server refuses the
   *   stream for good (then the state is "refused" and nothing is retried)
   */
  constructor(sessionId, token, onEvent, onState = () => {}, onResync = () => {},
    onRefused = () => {}) {
    this.sessionId = sessionId;
    this.token = token;
    this.onEvent = onEvent;
    this.onState = onState;
    this.onResync = onResync;
    this.onRefused = onRefused;
    this.last = -1;
    this.source = null;
    this.retry = 0;
    this.timer = null;
    this.stopped = false;
    this.reconnects = 0;
  }

  address() {
    return url(`v1/sessions/${encodeURIComponent(this.sessionId)}/events`,
      { access_token: this.token, after: -1 });
  }

  open() {
    this.stopped = false;
    this.onState(this.reconnects ? "reconnecting" : "connecting");
    const src = new EventSource(this.address());
    this.source = src;
    const deliver = (e) => this.deliver(e);
    for (const type of EVENT_TYPES) src.addEventListener(type, deliver);
    src.onmessage = deliver;
    let opened = false;
    src.onopen = () => {
      this.retry = 0;
      if (!opened && this.reconnects) {
        this.last = -1;
        this.onResync();
      }
      opened = true;
      this.onState("live");
    };
    src.onerror = () => {
      // The browser would retry on its own, but with its own timing, none after a refused
      // request, and from the last id it saw: reconnect ourselves, and replay.
      src.close();
      if (this.source !== src || this.stopped) return;
      this.source = null;
      this.reconnects += 1;
      this.onState("reconnecting");
      const delay = Math.min(5000, 250 * 2 ** this.retry++);
      this.refused().then((err) => {
        if (this.stopped) return;
        if (err) {
          this.stopped = true;
          this.onState("refused");
          this.onRefused(err);
          return;
        }
        this.timer = setTimeout(() => this.open(), delay);
      });
    };
  }

  /** The server's refusal of the stream, if it refuses it for good (else null: retry). */
  async refused() {
    const stop = new AbortController();
    try {
      const res = await fetch(this.address(), {
        headers: { Accept: "text/event-stream" }, signal: stop.signal });
      if (res.ok || res.status >= 500 || res.status === 429 || res.status === 408) {
        stop.abort(); // a stream that opens now (or a server that may recover): retry
        return null;
      }
      const data = await res.json().catch(() => null);
      const e = data && data.error ? data.error : { code: `http_${res.status}`,
        message: `The server answered ${res.status}.` };
      return new ApiError(e.code, e.message, res.status);
    } catch {
      return null; // not reachable: retry
    }
  }

  deliver(e) {
    let event;
    try {
      event = JSON.parse(e.data);
    } catch {
      return;
    }
    const seq = typeof event.seq === "number" ? event.seq : Number(e.lastEventId);
    if (Number.isFinite(seq)) {
      if (seq <= this.last) return;
      this.last = seq;
    }
    this.onEvent(event);
  }

  close() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.source?.close();
    this.source = null;
    this.onState("closed");
  }
}
