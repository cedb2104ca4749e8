// Picking an agent: the agents a user may pick in a <select>; the server checks the pick
// against the team's policy. An accepted pick comes back as the session's events (like any
// handoff), so every tab and the operator see it; a refusal shows its code and sentence.
// While a person (a human agent) holds the conversation the picker says so, and a pick
// asks first: it takes the conversation away from that person; a team that keeps the
// person (`person_keeps_conversation`) disables the picker until they hand it back.

import { call } from "./api.js";
import { confirmWith } from "./confirm.js";
import { el } from "./team.js";
import { notPicked } from "./words.js";

export class Picker {
  /**
   * @param {HTMLFormElement} form with a <select name="agent">, a .held note and an .error
   * @param {import("./team.js").TeamInfo} team
   * @param {() => {id: string, token: string} | null} session
   */
  constructor(form, team, session) {
    this.form = form;
    this.team = team;
    this.session = session;
    this.active = null;
    this.select = form.querySelector("select");
    this.button = form.querySelector("button");
    this.held = form.querySelector(".held");
    this.error = form.querySelector(".error");
    this.select.replaceChildren(...team.selectable().map((a) =>
      el("option", { value: a.name }, team.label(a.name))));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.pick(this.select.value);
    });
  }

  /** The person holding the conversation now, if a human agent does. */
  person() {
    return this.active && this.team.agent(this.active).human ? this.active : null;
  }

  setActive(name) {
    this.active = name;
    if ([...this.select.options].some((o) => o.value === name)) this.select.value = name;
    const person = this.person();
    const kept = Boolean(person) && this.team.personKeeps;
    this.select.disabled = kept;
    if (this.button) this.button.disabled = kept;
    if (this.held) {
      this.held.textContent = !person ? "" : `${this.team.label(person)} — a person — is `
        + "handling your conversation now. " + (kept ? "They will hand it back when they "
        + "are done." : "Switching takes it away from them.");
    }
  }

  async pick(name) {
    const s = this.session();
    if (!s) return;
    this.error.textContent = "";
    const person = this.person();
    if (person && name !== person) {
      const label = this.team.label(name);
      const sure = await confirmWith({
        title: "Take the conversation from the person?",
        text: `${this.team.label(person)} is handling your conversation. If you switch, `
          + `${label} answers instead and the person stops.`,
        yes: `Switch to ${label}`, no: "Stay with the person",
      });
      if (!sure) return;
    }
    try {
      await call("POST", `v1/sessions/${encodeURIComponent(s.id)}/agent`,
        { token: s.token, body: { agent: name } });
    } catch (err) {
      this.error.textContent = notPicked(this.team.label(name), err);
    }
  }
}
