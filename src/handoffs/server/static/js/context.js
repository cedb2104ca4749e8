// The session's typed context (Team(context_type=...)) as a list of its fields: what
// `GET /v1/sessions/{id}` answers under `context` (a customer's token: the public fields
// only; the operator key: all of them), kept current by `context_changed` events. Hidden
// while there is nothing to show (a team without a context, or none of it public).

import { el } from "./team.js";

export class ContextPanel {
  /**
   * @param {HTMLElement} box shown or hidden as a whole
   * @param {HTMLElement} list the <dl> the fields go in
   */
  constructor(box, list) {
    this.box = box;
    this.list = list;
    this.fields = null;
  }

  /** Show these fields (null or undefined: the session has no context to show). */
  set(fields) {
    this.fields = fields ? { ...fields } : null;
    this.draw();
  }

  /** A `context_changed` event's fields, applied (a customer's carry public ones only). */
  change(changed) {
    if (!changed) return;
    this.fields = { ...(this.fields || {}), ...changed };
    this.draw(Object.keys(changed));
  }

  draw(fresh = []) {
    const names = Object.keys(this.fields || {});
    this.box.hidden = names.length === 0;
    this.list.replaceChildren(...names.flatMap((name) => [
      el("dt", {}, name.replaceAll("_", " ")),
      el("dd", { "data-field": name, class: fresh.includes(name) ? "changed" : "" },
        shown(this.fields[name])),
    ]));
  }
}

function shown(value) {
  if (value === null || value === undefined || value === "") return "–";
  if (Array.isArray(value)) return value.length ? value.map(shown).join(", ") : "–";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
