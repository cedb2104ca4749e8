// "Edit and rerun" on one model call of the inspector: the call's system text, history
// window, tools and model, editable; "Rerun this call" makes that one call again on the
// server (POST v1/sessions/{id}/rerun: nothing is stored) and shows its answer beside the
// recorded one, each with its tool calls; "Fork from here with this answer" makes a new
// session as it was at that call, continued with that answer, and opens it in the chat.

import { count as counted, el, ms } from "./team.js";

let made = 0;

/** The answer of a call (a `model_response` event, or a rerun's `response`), its text and
 * its tool calls, for one side of the comparison. */
function answer(side, title, r, meta, fork, delegated) {
  const calls = r.tool_calls || [];
  const text = r.error ? null : r.text || "";
  const usable = !r.error && text && !calls.length && !delegated;
  const why = delegated ? "A delegate's answer goes to the agent that asked it, not to the "
    + "customer: fork at a call of the main line."
    : r.error ? "This call failed; there is no answer to continue with."
    : calls.length ? "This answer calls tools; a fork continues from an answer in words."
    : !text ? "This answer is empty." : "";
  const note = el("p", { class: "fork-note muted", role: "status" });
  const button = el("button", { type: "button", class: "fork-with", disabled: !usable || null,
    onclick: () => fork(text, button, note) }, "Fork from here with this answer");
  return el("section", { class: `side ${side}`, "aria-label": title },
    el("h5", {}, title),
    r.error ? el("p", { class: "error-text" }, `${r.error.code}: ${r.error.message}`) : null,
    text ? el("pre", { class: "text", dir: "auto", tabindex: "0" }, text) : null,
    !r.error && !text && !calls.length ? el("p", { class: "muted" }, "(no text)") : null,
    ...calls.map((c) => el("div", { class: "call-line" },
      el("code", {}, `${c.name}(${c.arguments})`))),
    el("p", { class: "meta" }, meta),
    button, why ? el("p", { class: "muted why-not" }, why) : null, note);
}

/** Tokens in words; none when the model did not count any (the offline model). */
export function tokens(usage) {
  if (!usage) return "tokens not reported";
  const { input_tokens: i = 0, output_tokens: o = 0 } = usage;
  return i || o ? `${i} → ${o} tokens` : "no token count";
}

/**
 * The "Edit and rerun" part of a model call whose response is in.
 * @param {object} e the call's `model_request` event
 * @param {object} recorded its `model_response` event
 * @param {{rerun: (e: object, edits: object) => Promise<object>,
 *   forkWith: (e: object, text: string) => Promise<{id: string, href: string}>}} actions
 */
export function rerunPanel(e, recorded, actions) {
  const n = ++made;
  const count = (e.messages || []).length;
  const system = el("textarea", { id: `rerun-system-${n}`, rows: "6", dir: "auto" });
  system.value = e.system || "";
  const windowInput = el("input", { id: `rerun-window-${n}`, type: "number", min: "0",
    max: String(count), value: String(count), inputmode: "numeric" });
  const model = el("input", { id: `rerun-model-${n}`, type: "text", autocomplete: "off",
    placeholder: "the agent's own model, or e.g. openai:gpt-4.1-mini" });
  const tools = (e.tools || []).map((t) => el("input", { type: "checkbox", value: t.name,
    checked: true, id: `rerun-tool-${n}-${t.name}` }));
  const error = el("p", { class: "error", role: "alert" });
  const compare = el("div", { class: "compare", hidden: true });
  const go = el("button", { type: "submit", class: "rerun-go" }, "Rerun this call");
  const fork = async (text, button, note) => {
    button.disabled = true;
    note.textContent = "Forking…";
    try {
      const f = await actions.forkWith(e, text);
      note.replaceChildren(`Forked as ${f.id}, continued in the chat: `,
        el("a", { class: "link", href: f.href, target: "_blank" }, "open it"), ".");
    } catch (err) {
      note.textContent = `Not forked (${err.code}): ${err.message}`;
    } finally {
      button.disabled = false;
    }
  };
  const form = el("form", { class: "rerun" },
    el("h4", {}, "Edit and rerun this call"),
    el("label", { for: system.id }, "System text"), system,
    el("label", { for: windowInput.id }, "History window: how many of the "
      + `${counted(count, "message")} to send (the newest)`), windowInput,
    tools.length ? el("fieldset", { class: "tool-picks" }, el("legend", {}, "Tools offered"),
      ...tools.map((box) => el("label", { for: box.id, class: "tool-pick" }, box, " ",
        el("code", {}, box.value)))) : el("p", { class: "muted" }, "No tools were offered."),
    el("label", { for: model.id }, "Model (any model string the server can build)"), model,
    el("div", { class: "actions" }, go), error);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    error.textContent = "";
    go.disabled = true;
    go.textContent = "Running…";
    try {
      const edits = { system: system.value, window: Number(windowInput.value),
        tools: tools.filter((b) => b.checked).map((b) => b.value),
        model: model.value.trim() || null };
      const r = await actions.rerun(e, edits);
      const mine = r.response;
      compare.replaceChildren(
        answer("recorded", "Recorded answer", recorded,
          `${tokens(recorded.usage)} · ${ms(recorded.latency)}`
          + `${recorded.model ? ` · model ${recorded.model}` : ""}`,
          (text, b, note) => fork(text, b, note), Boolean(e.line)),
        answer("again", `This rerun (${r.model})`, mine,
          `${tokens(mine.usage)} · ${ms(r.latency)}${mine.model ? ` · model ${mine.model}` : ""}`
          + ` · sent ${counted(r.request.messages.length, "message")}, tools: `
          + `${r.request.tools.join(", ") || "none"}`,
          (text, b, note) => fork(text, b, note), Boolean(e.line)));
      compare.hidden = false;
    } catch (err) {
      error.textContent = `Not rerun (${err.code}): ${err.message}`;
    } finally {
      go.disabled = false;
      go.textContent = "Rerun this call";
    }
  });
  const open = el("button", { type: "button", class: "edit-rerun", "aria-expanded": "false" },
    "Edit and rerun");
  const body = el("div", { class: "rerun-body", hidden: true }, form, compare);
  open.addEventListener("click", () => {
    body.hidden = !body.hidden;
    open.setAttribute("aria-expanded", String(!body.hidden));
    if (!body.hidden) system.focus();
  });
  return el("div", { class: "rerun-box" }, open, body);
}
