// The detail panel's checklists (acceptance criteria, definition of done) and comments, as
// `GET /v1/board/todos/{id}` reads them; for a person, a checkbox per item (`check`, sent with
// the item's place and text as read: a list changed since is refused, 409, and read again),
// "Add an item" (`add_item`) and "Add a comment" (`comment`). Each change is a change of the
// todo: other viewers' panels read it again.

import { el } from "./dom.js";
import { exactTime } from "./format.js";
import * as actions from "./actions.js";

const KINDS = [["acceptance", "Acceptance criteria"], ["done", "Definition of done"]];

/** Sends an op; say(text) shows a refusal; reload() reads the panel again (after a refusal
 *  that says the list changed, too). */
async function send(body, say, reload) {
  say(null);
  const r = await actions.write(body);
  if (!r) return false;
  if (r.error) { say(r.error.message); if (r.error.status === 409) reload(); return false; }
  reload();
  return true;
}

/** One checklist: its items with their checkboxes, and (a person) "Add an item". */
function checklist(t, kind, title, items, person, ui) {
  const slot = ui.errorSlot();
  const list = items.length
    ? el("ul", { class: "checklist" }, ...items.map((item) => {
      const id = "detail-" + kind + "-" + item.position;
      const box = el("input", { type: "checkbox", id, checked: item.checked, disabled: !person,
        onchange: () => send({ op: "check", id: t.id, kind, position: item.position, text: item.text,
                               checked: box.checked }, slot.say, ui.reload) });
      return el("li", null, box, " ", el("label", { for: id, text: item.text }));
    }))
    : el("p", { class: "muted", text: "None." });
  const kids = [list];
  if (person) {
    const input = el("input", { id: "detail-" + kind + "-new", type: "text", maxlength: 10000, autocomplete: "off" });
    const form = el("form", { class: "inline" },
      el("label", { for: input.id, text: "Add an item to the " + title.toLowerCase() }), input,
      el("button", { type: "submit", id: input.id + "-add", text: "Add" }));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const text = input.value.trim();
      if (!text) { input.focus(); return; }
      if (await send({ op: "add_item", id: t.id, kind, text }, slot.say, ui.reload)) input.value = "";
    });
    kids.push(form);
  }
  kids.push(slot);
  return ui.section(title, ...kids);
}

/** The comments, oldest first, and (a person) "Add a comment". */
function comments(data, person, ui) {
  const t = data.todo, items = data.comments || [];
  const slot = ui.errorSlot();
  const kids = [];
  if (data.comments_omitted) kids.push(el("p", { class: "muted", text: data.comments_omitted + " older comments not shown." }));
  kids.push(items.length
    ? el("ol", { class: "comments" }, ...items.map((c) => el("li", null,
      el("b", { text: c.author || "someone" }), " ", el("span", { class: "muted", title: exactTime(c.at), text: exactTime(c.at) }),
      el("div", { class: "text", text: c.body }))))
    : el("p", { class: "muted", text: "No comments." }));
  if (person) {
    const box = el("textarea", { id: "detail-comment", rows: 3, maxlength: 10000 });
    const form = el("form", { class: "comment" },
      el("label", { for: "detail-comment", text: "Add a comment to #" + t.id }), box,
      el("button", { type: "submit", id: "detail-comment-add", text: "Comment" }));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = box.value.trim();
      if (!body) { box.focus(); return; }
      if (await send({ op: "comment", id: t.id, body }, slot.say, ui.reload)) box.value = "";
    });
    kids.push(form);
  }
  kids.push(slot);
  return ui.section("Comments", ...kids);
}

/** The parts: both checklists, then the comments. ui: {section, errorSlot, reload}. */
export function notesParts(data, person, ui) {
  const lists = data.checklists || {};
  return [...KINDS.map(([kind, title]) => checklist(data.todo, kind, title, lists[kind] || [], person, ui)),
          comments(data, person, ui)];
}

/** The ids of the fields whose typing a live refresh must not wipe. */
export const NOTE_FIELDS = ["detail-comment", "detail-acceptance-new", "detail-done-new"];
