// The detail panel's "Move" part, for a person: todo #N to another list (or the tenant-wide
// pool, or a new list), and under another todo (it goes to that todo's list) or to the top
// level. Each move is made on the version the panel read (`{"op": "move", "version"}`): a
// change since is refused (409) and the panel is read again.

import { el } from "./dom.js";
import { conversations, convKey } from "./store.js";
import { listWords } from "./format.js";
import * as actions from "./actions.js";

const POOL = "\u0000pool";   // the select's value for the tenant-wide pool (no list has it)

/** Sends a move of t; say(text) shows a refusal, reload() reads the panel again. */
async function move(t, where, say, reload) {
  say(null);
  const r = await actions.write({ op: "move", id: t.id, version: t.version, ...where });
  if (!r) return;
  if (r.error) {
    say(r.error.message);
    if (r.error.status === 409 && r.error.body && r.error.body.current) reload();
    return;
  }
  reload();
}

/** "Move to list": a list of the board, or a new one named. */
function listForm(t, say, reload) {
  const here = convKey(t.conversation_id);
  const options = conversations().map((c) => {
    const key = c.conversation_id === null ? POOL : c.conversation_id;
    return el("option", { value: key, selected: convKey(c.conversation_id) === here,
                          text: c.conversation_id === null ? "Tenant-wide pool" : c.conversation_id });
  });
  if (!options.some((o) => o.value === POOL)) options.unshift(el("option", { value: POOL, text: "Tenant-wide pool" }));
  const select = el("select", { id: "detail-move-list", name: "list" }, ...options);
  const named = el("input", { id: "detail-move-new", name: "new", type: "text", maxlength: 200, autocomplete: "off" });
  const form = el("form", { class: "inline", "aria-labelledby": "detail-move-list-title" },
    el("span", { id: "detail-move-list-title", class: "legend", text: "Move #" + t.id + " to" }),
    el("label", { for: "detail-move-list", text: "the list" }), select,
    el("label", { for: "detail-move-new", text: "or a new list named" }), named,
    el("button", { type: "submit", id: "detail-move-go", text: "Move #" + t.id }));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const name = named.value.trim();
    const list = name || (select.value === POOL ? null : select.value);
    if (convKey(list) === here) { say("#" + t.id + " is on " + listWords(list) + " already."); return; }
    move(t, { list }, say, reload);
  });
  return form;
}

/** "Make it a subtask of #…", and "Make it top-level" for a subtask. */
function parentForm(t, say, reload) {
  const typed = el("input", { id: "detail-move-parent", name: "parent", type: "text", inputmode: "numeric",
                              pattern: "[0-9]*", size: 6, autocomplete: "off" });
  const form = el("form", { class: "inline" },
    el("label", { for: "detail-move-parent", text: "Make #" + t.id + " a subtask of the todo with id" }), typed,
    el("button", { type: "submit", id: "detail-move-under", text: "Make it a subtask" }),
    t.parent_id !== null && t.parent_id !== undefined
      ? el("button", { type: "button", id: "detail-move-top", text: "Make #" + t.id + " top-level",
                       onclick: () => move(t, { parent_id: null }, say, reload) })
      : null);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const raw = typed.value.trim().replace(/^#/, "");
    const parent = Number(raw);
    if (!raw || !Number.isInteger(parent) || parent <= 0) { say("Type the id of the todo #" + t.id + " goes under."); return; }
    move(t, { parent_id: parent }, say, reload);
  });
  return form;
}

/** The part's forms. */
export const moveForms = (t, say, reload) => [listForm(t, say, reload), parentForm(t, say, reload)];
