// The detail panel (#detail, a modal dialog labelled by its heading): one todo as
// `GET /v1/board/todos/{id}` tells it, read when the panel opens (never before): its texts,
// claim, subtasks, dependencies and history, and, for a person, its edit form (labels and the
// due date too), "Move" (move.js), the checklists and comments (notes.js), "Add a subtask",
// "Add a dependency", "Release the claim" and "Archive". Escape or "Close" closes
// it and the focus goes back to the control that opened it.

import { request, ApiError, Unauthorized } from "./api.js";
import { $, el } from "./dom.js";
import { statusWord, exactTime, duration, listWords, dueDay, labelsText, labelsOf } from "./format.js";
import { store, serverNow, ERROR_MS } from "./store.js";
import * as actions from "./actions.js";
import { lease, errorBox } from "./todo.js";
import * as focus from "./focus.js";
import { moveForms } from "./move.js";
import { notesParts, NOTE_FIELDS } from "./notes.js";

let openId = null;     // the todo shown
let opener = null;     // the focus key of the control that opened the panel
let shown = null;      // the last answer shown
let base = null;       // what the edit form was filled with: { version, subject, description, priority, owner }
let notice = null;     // a sentence to show above the edit form on the next render ("Saved.")
let race = null;       // after an edit lost a race (409): { id, read: the values it was made on }
let loads = 0;         // so that a slower, older answer is dropped
let returnFocus = true;

const present = (v) => v !== null && v !== undefined;
const dialog = () => $("detail");

/** Opens the panel on todo id; openerKey (focus.keyOf) is where the focus goes back. */
export function openDetail(id, openerKey) {
  opener = openerKey;
  returnFocus = true;
  notice = null;
  race = null;
  if (!dialog().open) dialog().showModal();
  load(id);
}

/** After a read of the board: reads the shown todo again when it changed since, unless the
 *  person has started editing it (then their save meets the change: 409, see save). */
export function refreshDetail() {
  if (openId === null || !shown) return;
  const now = store.byId.get(openId);
  if (!now || now.todo.version === shown.todo.version || dirty() || typing()) return;
  load(openId, true);
}

/** Wires the close button and what closing does. */
export function wireDetail() {
  $("detail-close").addEventListener("click", () => dialog().close());
  dialog().addEventListener("close", () => {
    // (the event comes after the close, as a task of its own: an input event may open the panel
    // again before it, and what is shown then stays)
    if (dialog().open) return;
    openId = null; shown = null; base = null; race = null;
    $("detail-body").textContent = "";
    if (returnFocus) focus.restore(opener);
  });
}

/** Reads todo id and shows it; `refreshing`: a live refresh, dropped when the person has
 *  started typing meanwhile (their input is not wiped). */
async function load(id, refreshing) {
  const mine = ++loads;
  const keep = dialog().contains(document.activeElement) ? document.activeElement.id : "";
  const same = id === openId;
  openId = id;
  if (!same) {
    $("detail-title").textContent = "#" + id;
    $("detail-body").replaceChildren(el("p", { class: "muted", text: "Loading #" + id + "…" }));
    $("detail-title").focus();
  }
  let data;
  try {
    data = await request("GET", "/v1/board/todos/" + encodeURIComponent(id));
  } catch (e) {
    if (mine !== loads || e instanceof Unauthorized) return;
    shown = null;
    $("detail-body").replaceChildren(errorBox(e instanceof ApiError && e.status === 404
      ? "#" + id + " is not there any more (archived or deleted)." : "Could not read #" + id + ": " + e.message));
    return;
  }
  if (mine !== loads || !dialog().open) return;
  if (refreshing && (dirty() || typing())) return;
  render(data);
  // the control that had the focus, if it is still there; else the heading (never the page
  // behind the dialog)
  const again = keep && $(keep);
  if (again) again.focus();
  else if (!dialog().contains(document.activeElement)) $("detail-title").focus();
}

/** Whether the person has typed a subtask or picked or typed a dependency, not sent yet. */
function typing() {
  return ["detail-subtask", "detail-dep-id", "detail-dep-select", "detail-move-new", "detail-move-parent", ...NOTE_FIELDS]
    .some((id) => $(id) && $(id).value.trim() !== "");
}

function dirty() {
  const f = $("detail-edit");
  if (!f || !base) return false;
  const typed = typedIn(f);
  return FIELDS.some((k) => typed[k] !== base[k]);
}

// ---- rendering -------------------------------------------------------------------------------

function render(data) {
  shown = data;
  const t = data.todo;
  // after a lost race: what the form holds now (typed since the 409 too), merged into the new form
  const form = $("detail-edit");
  const merging = race && race.id === t.id && form ? { read: race.read, typed: typedIn(form) } : null;
  race = null;
  $("detail-title").textContent = "#" + t.id + " " + t.subject;
  // an archived todo is history: read, not changed, until it is put back (the Archived view)
  const person = store.person && !t.archived_at;
  const body = [
    summary(t),
    t.archived_at ? el("p", { class: "notice", id: "detail-archived", role: "status",
                              text: "Archived " + exactTime(t.archived_at) + ". Put it back from the Archived todos to change it." })
      : null,
    t.claimed_by ? claim(t, person) : null,
    text("Description", t.description, "No description."),
    text("Outcome", t.outcome, null),
    text("Completion criteria", t.completion_criteria, null),
    person ? editForm(t, merging) : null,
    person ? moveSection(t) : null,
    ...notesParts(data, person, { section, errorSlot, reload: () => { notice = null; load(t.id); } }),
    subtasks(data, person),
    dependencies(data, person),
    history(data),
    person ? archiveSection(t) : null,
  ];
  $("detail-body").replaceChildren(...body.filter(Boolean));
}

function section(title, ...kids) {
  return el("section", { class: "part" }, el("h3", { text: title }), ...kids);
}

/** "3 min ago", with the exact time on hover. */
function when(ts) {
  if (!ts) return el("span", { text: "—" });
  const s = (serverNow() - Date.parse(ts)) / 1000;
  return el("span", { title: exactTime(ts), text: isNaN(s) ? ts : duration(Math.max(0, s)) + " ago" });
}

function summary(t) {
  const row = (label, value) => [el("dt", { text: label }), el("dd", null, value)];
  return el("dl", { class: "facts" },
    ...row("Status", el("span", { class: "badge " + t.status, text: statusWord(t.status) })),
    ...row("Priority", t.priority || "none"),
    ...row("List", present(t.conversation_id) ? t.conversation_id : "Tenant-wide pool"),
    ...row("Assignee", t.owner || "none"),
    ...row("Labels", labelsText(t.labels) || "none"),
    ...row("Due", dueDay(t.due_at) || "none"),
    ...row("Made by", t.agent_id || "—"),
    ...row("Created", when(t.created_at)),
    ...(t.started_at ? row("Started", when(t.started_at)) : []),
    ...(t.completed_at ? row("Completed", when(t.completed_at)) : []),
    ...row("Updated", el("span", null, when(t.updated_at), t.updated_by ? " by " + t.updated_by : "")),
    ...(present(t.parent_id) ? row("Subtask of", openButton("detail-parent", t.parent_id, "#" + t.parent_id)) : []));
}

function text(title, value, empty) {
  if (!value && empty === null) return null;
  return section(title, el("div", { class: value ? "text" : "text muted", text: value || empty }));
}

/** A button that shows another todo in the panel (buttonId: so that a reload of the panel gives
 *  it the focus back). */
function openButton(buttonId, id, label, subject) {
  return el("button", { type: "button", class: "link", id: buttonId,
                        "aria-label": "Open #" + id + (subject ? ": " + subject : ""), text: label,
                        onclick: () => { notice = null; race = null; load(id); } });
}

/** A slot for a refusal next to the controls it concerns; say(text) fills it for 30 s. */
function errorSlot() {
  const slot = el("div", { class: "slot" });
  let timer = null;
  slot.say = (msg) => {
    clearTimeout(timer);
    slot.replaceChildren(msg ? errorBox(msg) : "");
    if (msg) timer = setTimeout(() => slot.replaceChildren(), ERROR_MS);
  };
  return slot;
}

function claim(t, person) {
  const slot = errorSlot();
  return section("Claim",
    el("p", { "data-role": "claim" }, "claimed by ", el("b", { text: t.claimed_by }), " · ",
       lease(t.lease_seconds_left, Date.now()), " · fence " + (present(t.fence) ? t.fence : "—")),
    person ? el("button", { type: "button", id: "detail-release", text: "Release the claim on #" + t.id,
      onclick: async () => {
        slot.say(null);
        const r = await actions.release(t.id, t.claimed_by, t.fence, null, t.lease_expires_at);
        if (r && r.error) slot.say(r.error.message);
        else if (r) load(t.id);
      } }) : null,
    slot);
}

const FIELDS = ["subject", "description", "priority", "owner", "labels", "due"];
const FIELD_WORDS = { subject: "subject", description: "description", priority: "priority", owner: "assignee",
                      labels: "labels", due: "due date" };

/** A todo's editable values as the form holds them (a textarea's value has LF line ends: a
 *  CRLF description compared as stored would always look edited). */
function valuesOf(t) {
  return { subject: t.subject || "", description: (t.description || "").replace(/\r\n?/g, "\n"),
           priority: t.priority || "", owner: t.owner || "", labels: labelsText(t.labels), due: dueDay(t.due_at) };
}

/** What the edit form holds. */
function typedIn(form) {
  const f = form.elements;
  return { subject: f.subject.value, description: f.description.value, priority: f.priority.value, owner: f.owner.value,
           labels: f.labels.value, due: f.due.value };
}

// (the subject and the assignee are sent trimmed, labels as a list)
const same = (field, a, b) => (field === "subject" || field === "owner" ? a.trim() === b.trim()
  : field === "labels" ? labelsOf(a).join("\n") === labelsOf(b).join("\n") : a === b);

/**
 * After a lost race (409): what the form shows, per field what the person typed where they
 * changed it, else the value as it is now. `clashes`: the fields both changed, differently
 * (the current value shows beside, with "Use current"); `theirs`: the fields only the other
 * changed (the form takes the current value, and says so).
 */
function merge(read, typed, now) {
  const values = {}, clashes = [], theirs = [];
  for (const f of FIELDS) {
    const mine = !same(f, typed[f], read[f]), changed = !same(f, now[f], read[f]);
    values[f] = mine ? typed[f] : now[f];
    if (mine && changed && !same(f, typed[f], now[f])) clashes.push(f);
    else if (!mine && changed) theirs.push(f);
  }
  return { values, clashes, theirs };
}

/** The edit form; race ({read, typed}): the values read and typed before a lost race, merged
 *  into the todo as it is now (see merge). */
function editForm(t, race) {
  base = { version: t.version, ...valuesOf(t) };
  const { values, clashes, theirs } = race ? merge(race.read, race.typed, base) : { values: base, clashes: [], theirs: [] };
  const notes = {};
  for (const f of clashes) notes[f] = clashNote(f, base[f]);
  for (const f of theirs) notes[f] = theirsNote(f, race.read[f]);
  const slot = errorSlot();
  const status = el("p", { class: "notice", role: "status", id: "detail-notice" });
  status.textContent = race ? raceWords(t, values, clashes, theirs) : notice || "";
  notice = null;
  const field = (label, control) => {
    const note = notes[control.name];
    if (note) control.setAttribute("aria-describedby", note.id);
    return el("div", { class: "field" }, el("label", { for: control.id, text: label }), control, note || null);
  };
  const form = el("form", { id: "detail-edit", class: "edit", "aria-labelledby": "detail-edit-title" },
    el("h3", { id: "detail-edit-title", text: "Edit #" + t.id }),
    status,
    field("Subject", el("input", { id: "detail-subject", name: "subject", type: "text", required: true,
                                   maxlength: 2000, value: values.subject })),
    field("Description", el("textarea", { id: "detail-description", name: "description", rows: 4, text: values.description })),
    el("div", { class: "row" },
      field("Priority", el("select", { id: "detail-priority", name: "priority" },
        ...[["", "none"], ["high", "high"], ["medium", "medium"], ["low", "low"]].map(([v, w]) =>
          el("option", { value: v, text: w, selected: v === values.priority })))),
      field("Assignee", el("input", { id: "detail-owner", name: "owner", type: "text", maxlength: 200,
                                      value: values.owner, autocomplete: "off" }))),
    el("div", { class: "row" },
      field("Labels (comma-separated)", el("input", { id: "detail-labels", name: "labels", type: "text", maxlength: 1100,
                                                      value: values.labels, autocomplete: "off" })),
      field("Due date", el("input", { id: "detail-due", name: "due", type: "date", value: values.due }))),
    el("div", { class: "buttons" }, el("button", { type: "submit", id: "detail-save", class: "primary",
                                                   text: "Save changes to #" + t.id })),
    slot);
  form.addEventListener("submit", (ev) => { ev.preventDefault(); save(t.id, form, slot, status); });
  return form;
}

const shownValue = (field, v) => (v === "" ? (field === "description" ? "(no description)" : "none") : v);

/** Beside a field both changed: its current value, and "Use current", which puts it in the field. */
function clashNote(field, value) {
  const id = "detail-" + field + "-current";
  const note = el("div", { class: "current", id, "data-field": field },
    el("span", { class: "label", text: "Current: " }),
    el("span", { class: "value", "data-role": "current", text: shownValue(field, value) }), " ",
    el("button", { type: "button", class: "small", id: id + "-use", "aria-label": "Use current " + FIELD_WORDS[field],
                   text: "Use current",
                   onclick: () => {
                     const control = $("detail-" + field);
                     control.value = value;
                     control.removeAttribute("aria-describedby");
                     note.remove();
                     control.focus();
                   } }));
  return note;
}

/** Beside a field only the other changed: the form holds its current value; what it was. */
function theirsNote(field, was) {
  return el("div", { class: "current", id: "detail-" + field + "-changed", "data-field": field, "data-role": "theirs",
                     text: "Changed by someone else since; it was: " + shownValue(field, was) });
}

/** The status line after a lost race. */
function raceWords(t, values, clashes, theirs) {
  const words = (fs) => fs.map((f) => FIELD_WORDS[f]).join(", ");
  const left = FIELDS.some((f) => !same(f, values[f], base[f]));
  return "Changed by someone else since you read it (#" + t.id + " is at version " + t.version + " now). "
    + (clashes.length ? "You both changed the " + words(clashes) + ": the form keeps yours, the current value is beside. "
                      : "")
    + (theirs.length ? "Their change to the " + words(theirs) + " is in the form. " : "")
    + (left ? "Save again to apply what you typed." : "It holds what you typed already: nothing is left to save.");
}

async function save(id, form, slot, status) {
  slot.say(null);
  status.textContent = "";
  const f = form.elements;
  const body = { op: "edit", id, version: base.version };
  if (f.subject.value.trim() !== base.subject) body.subject = f.subject.value.trim();
  if (f.description.value !== base.description) body.description = f.description.value;
  if (f.priority.value !== base.priority) body.priority = f.priority.value || null;
  if (f.owner.value.trim() !== base.owner) body.owner = f.owner.value.trim() || null;
  if (!same("labels", f.labels.value, base.labels)) body.labels = labelsOf(f.labels.value);
  if (f.due.value !== base.due) body.due_at = f.due.value || null;
  if (Object.keys(body).length === 3) { status.textContent = "Nothing to save: no field changed."; return; }
  const r = await actions.write(body);
  if (!r) return;
  if (!r.error) { notice = "Saved."; load(id); return; }
  const current = r.error.status === 409 && r.error.body && r.error.body.current;
  if (!current) { slot.say(r.error.message); return; }
  // A lost race: the panel is read again, and the form merges what the person typed into the
  // todo as it is now (see merge): nothing typed is lost, nothing changed meanwhile is hidden.
  race = { id, read: { ...base } };
  actions.actionHooks.changed();
  load(id);
}

/** A list of todos (prefix: of its buttons' ids, e.g. "detail-subtask-12"). */
function listOf(items, prefix, extra) {
  return el("ul", { class: "refs" }, ...items.map((r) => el("li", null,
    openButton(prefix + "-" + r.id, r.id, "#" + r.id, r.subject), " ",
    el("span", { class: "badge " + r.status, text: statusWord(r.status) }), " ",
    el("span", { class: "subject", text: r.subject }), extra ? " " : null, extra ? extra(r) : null)));
}

function subtasks(data, person) {
  const t = data.todo;
  const items = data.subtasks || [];
  const kids = [items.length ? listOf(items, "detail-subtask") : el("p", { class: "muted", text: "No subtasks." })];
  if (data.subtasks_omitted) kids.push(el("p", { class: "muted", text: data.subtasks_omitted + " more not shown." }));
  if (person) {
    const slot = errorSlot();
    const input = el("input", { id: "detail-subtask", name: "subject", type: "text", maxlength: 2000, autocomplete: "off" });
    const form = el("form", { class: "inline" },
      el("label", { for: "detail-subtask", text: "Add a subtask to #" + t.id }), input,
      el("button", { type: "submit", text: "Add" }));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      slot.say(null);
      const subject = input.value.trim();
      if (!subject) { input.focus(); return; }
      const r = await actions.add(t.conversation_id, subject, t.id);
      if (r && r.error) slot.say(r.error.message);
      else if (r) { notice = null; load(t.id); }
    });
    kids.push(form, slot);
  }
  return section("Subtasks", ...kids);
}

function dependencies(data, person) {
  const t = data.todo;
  const waits = data.blocked_by || [], blocks = data.blocks || [];
  const slot = errorSlot();
  const unblock = (r) => el("button", { type: "button", class: "small", id: "detail-unblock-" + r.id,
    "aria-label": "Remove the dependency of #" + t.id + " on #" + r.id, text: "Remove",
    onclick: async () => {
      slot.say(null);
      const res = await actions.write({ op: "unblock", id: t.id, on: r.id });
      if (res && res.error) slot.say(res.error.message);
      else if (res) load(t.id);
    } });
  const kids = [
    el("h4", { text: "#" + t.id + " waits for" }),
    waits.length ? listOf(waits, "detail-waits", person ? unblock : null) : el("p", { class: "muted", text: "Nothing." }),
    el("h4", { text: "Waiting for #" + t.id }),
    blocks.length ? listOf(blocks, "detail-blocks") : el("p", { class: "muted", text: "Nothing." }),
  ];
  if (person) kids.push(dependencyForm(t, waits, slot));
  kids.push(slot);
  return section("Dependencies", ...kids);
}

/** "Add a dependency": pick the todo #N waits for among the others on the page, or type its id. */
function dependencyForm(t, waits, slot) {
  const taken = new Set(waits.map((r) => r.id).concat([t.id]));
  const options = [...store.byId.values()].filter(({ todo }) => !taken.has(todo.id))
    .sort((a, b) => a.todo.id - b.todo.id)
    .map(({ todo, conversation }) => el("option", { value: todo.id,
      text: "#" + todo.id + " " + todo.subject + " (" + listWords(conversation) + ")" }));
  const select = el("select", { id: "detail-dep-select", name: "on" }, el("option", { value: "", text: "choose a todo…" }), ...options);
  const typed = el("input", { id: "detail-dep-id", name: "id", type: "text", inputmode: "numeric", pattern: "[0-9]*",
                              size: 6, autocomplete: "off" });
  const form = el("form", { class: "inline", "aria-labelledby": "detail-dep-title" },
    el("span", { id: "detail-dep-title", class: "legend", text: "Add a dependency:" }),
    el("label", { for: "detail-dep-select", text: "#" + t.id + " waits for" }), select,
    el("label", { for: "detail-dep-id", text: "or the todo with id" }), typed,
    el("button", { type: "submit", text: "Add the dependency" }));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    slot.say(null);
    const raw = typed.value.trim().replace(/^#/, "") || select.value;
    const on = Number(raw);
    if (!raw || !Number.isInteger(on) || on <= 0) { slot.say("Choose the todo #" + t.id + " waits for, or type its id."); return; }
    const r = await actions.write({ op: "block", id: t.id, on });
    if (r && r.error) slot.say(r.error.message);
    else if (r) load(t.id);
  });
  return form;
}

// ---- history ---------------------------------------------------------------------------------

// columns a change writes along with others, or said already (status)
const QUIET = new Set(["status", "updated_at", "version", "fence", "lease_expires_at", "heartbeat_at",
                       "started_at", "completed_at", "position"]);

function changeWords(column, v) {
  switch (column) {
    case "subject": return "renamed it “" + v + "”";
    case "description": return "edited the description";
    case "priority": return v ? "set priority " + v : "cleared the priority";
    case "owner": return v ? "assigned it to " + v : "unassigned it";
    case "claimed_by": return v ? "claimed it" : "released the claim";
    case "archived_at": return v ? "archived it" : "restored it";
    case "parent_id": return present(v) ? "made it a subtask of #" + v : "made it a top-level todo";
    case "conversation_id": return "moved it to " + listWords(v);
    case "labels": return Array.isArray(v) && v.length ? "set labels " + v.join(", ") : "cleared the labels";
    case "due_at": return v ? "set the due date " + dueDay(v) : "cleared the due date";
    case "comment": return "commented “" + v + "”";
    case "added": return "added the item “" + v + "”";
    case "checked": return "checked “" + v + "”";
    case "unchecked": return "unchecked “" + v + "”";
    default: {
      const s = typeof v === "string" ? v : JSON.stringify(v);
      return "set " + column.replace(/_/g, " ") + " to " + (s.length > 60 ? s.slice(0, 59) + "…" : s);
    }
  }
}

function historyLine(h) {
  let what;
  if (h.action === "insert") what = "created it" + (h.new_status ? " (" + statusWord(h.new_status) + ")" : "");
  else if (h.action === "delete") what = "deleted it";
  else {
    const parts = [];
    if (h.old_status && h.new_status && h.old_status !== h.new_status) {
      parts.push("changed status " + statusWord(h.old_status) + " → " + statusWord(h.new_status));
    }
    for (const [column, v] of Object.entries(h.changes || {})) if (!QUIET.has(column)) parts.push(changeWords(column, v));
    if (!parts.length && h.changes && "position" in h.changes) parts.push("moved it in its list");
    what = parts.length ? parts.join(", ") : "updated it";
  }
  return el("li", { "data-version": h.version }, el("b", { text: h.agent_id || "someone" }), " " + what + ", ", when(h.at));
}

function history(data) {
  const items = data.history || [];
  return section("History",
    items.length ? el("ol", { class: "history" }, ...items.map(historyLine)) : el("p", { class: "muted", text: "No history." }),
    data.history_omitted ? el("p", { class: "muted", text: data.history_omitted + " older changes not shown." }) : null);
}

function moveSection(t) {
  const slot = errorSlot();
  return section("Move", ...moveForms(t, slot.say, () => { notice = null; load(t.id); }), slot);
}

function archiveSection(t) {
  const slot = errorSlot();
  return el("div", { class: "part danger" },
    el("button", { type: "button", id: "detail-archive", text: "Archive #" + t.id,
      onclick: async (ev) => {
        const button = ev.currentTarget;
        if (button.disabled) return;
        button.disabled = true;   // one archive: a second would answer with no undo
        slot.say(null);
        const r = await actions.archive(t.id);
        button.disabled = false;
        if (!r) return;
        if (r.error) { slot.say(r.error.message); return; }
        // the todo is gone from the board: the focus goes to the toast's Undo, not back to it
        returnFocus = false;
        dialog().close();
        const undo = $("toast").querySelector("button");
        if (undo) undo.focus();
      } }),
    slot);
}
