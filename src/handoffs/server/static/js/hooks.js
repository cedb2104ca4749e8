// The page's hook for a tool's own events (`ctx.custom_event(name, data)` in a tool):
// `window.handoffs.on("seat_map", (data, event) => ...)` is called with each one of that
// name, in order; each is also dispatched on `window` as a DOM CustomEvent
// `handoffs:custom` whose `detail` is the whole event ({name, data, agent, tool, call_id,
// seq, turn, ...}). A hook added late is called at once with the events of its name the
// page has seen already. After a reload (or a reconnect, which replays the stored log)
// the session's earlier custom events come again, in order, so a page can rebuild what
// they showed; `event.turn` and `event.seq` tell them apart.

export class Hooks {
  constructor() {
    this.listeners = new Map(); // name -> [fn]
    this.seen = []; // the custom events since the page last started over
  }

  /** Call `fn(data, event)` for every custom event called `name` ("*": every one). */
  on(name, fn) {
    if (!this.listeners.has(name)) this.listeners.set(name, []);
    this.listeners.get(name).push(fn);
    for (const e of this.seen) if (name === "*" || e.name === name) this.call(fn, e);
    return () => this.off(name, fn);
  }

  off(name, fn) {
    const fns = this.listeners.get(name) || [];
    const i = fns.indexOf(fn);
    if (i >= 0) fns.splice(i, 1);
  }

  /** One `custom_event` event of the session's stream. */
  emit(e) {
    this.seen.push(e);
    for (const fn of [...(this.listeners.get(e.name) || []), ...(this.listeners.get("*") || [])]) {
      this.call(fn, e);
    }
    window.dispatchEvent(new CustomEvent("handoffs:custom", { detail: e }));
  }

  call(fn, e) {
    try {
      fn(e.data, e);
    } catch (err) {
      console.error(`handoffs: the hook for custom event ${e.name} failed`, err);
    }
  }

  /** The page starts over from the stored log (which replays the events again). */
  clear() {
    this.seen = [];
  }
}
