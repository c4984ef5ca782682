// One todo as an element: a row of the list view or a card of the board view. Both are
// `li.todo[data-todo-id][data-status][data-conversation]` with the same parts
// ([data-role=status|priority|active-form|claim|lease|blocked-by|subtasks|parent|owner|labels|due|updated|ago|agent|error])
// and controls: the checkbox that selects it for an action on several ([data-control=select],
// bulk.js), the subject opens the detail ([data-control=open]), the status buttons
// ([data-action=start|done|cancel|reopen]), "Release the claim" ([data-control=release]); a row
// also has its drag handle ([data-control=drag]) and "Move up/down" ([data-control=move-up|move-down]).
// Their clicks are handled by the view (one listener for all, see views.js).

import { el, setText } from "./dom.js";
import { statusWord, exactTime, clock, dueDay, overdue } from "./format.js";
import { store, convKey, secondsSince, serverNow } from "./store.js";

/** The status buttons: visible text, the first word of the accessible name, the status set. */
export const ACTIONS = {
  start: { text: "Start", name: "Start", status: "in_progress" },
  done: { text: "Complete", name: "Complete", status: "completed" },
  cancel: { text: "Cancel", name: "Cancel", status: "canceled" },
  reopen: { text: "Reopen", name: "Reopen", status: "pending" },
};

/** The status buttons each status offers. */
const ALLOWED = {
  pending: ["start", "done", "cancel"],
  blocked: ["start", "done", "cancel"],
  deferred: ["start", "done", "cancel"],
  in_progress: ["done", "cancel"],
  review: ["done", "cancel"],
  completed: ["reopen"],
  canceled: ["reopen"],
};

const present = (v) => v !== null && v !== undefined;

/**
 * The element of todo t. opts: kind ("row" or "card"), conversation (its list), depth (rows:
 * how deep it is nested under its parent), group (rows: the parent it is shown under, "" at
 * the top: rows move among the rows of their group only).
 */
export function todoElement(t, opts) {
  const card = opts.kind === "card";
  const busy = store.busy.has(t.id);
  const person = store.person;

  // (spaces between the parts: read and copied as words)
  const line1 = el("div", { class: "line1" },
    el("span", { class: "badge " + t.status, "data-role": "status", text: statusWord(t.status) }), " ",
    t.priority ? el("span", { class: "prio " + t.priority, "data-role": "priority",
                              title: "priority " + t.priority, text: t.priority }) : null,
    t.priority ? " " : null,
    el("button", { type: "button", class: "subject", "data-control": "open",
                   "aria-label": "Open #" + t.id + ": " + t.subject, text: t.subject }));

  const actions = el("div", { class: "actions" });
  if (person) {
    for (const a of ALLOWED[t.status] || []) {
      actions.append(el("button", { type: "button", "data-action": a, disabled: busy,
                                    "aria-label": ACTIONS[a].name + " #" + t.id, text: ACTIONS[a].text }));
    }
    if (t.claimed_by) {
      actions.append(el("button", { type: "button", "data-control": "release", disabled: busy,
                                    "aria-label": "Release the claim on #" + t.id, text: "Release" }));
    }
    if (!card) {
      actions.append(
        el("button", { type: "button", class: "move", "data-control": "move-up", disabled: busy,
                       "aria-label": "Move #" + t.id + " up", title: "Move up (Alt+↑)", text: "↑" }),
        el("button", { type: "button", class: "move", "data-control": "move-down", disabled: busy,
                       "aria-label": "Move #" + t.id + " down", title: "Move down (Alt+↓)", text: "↓" }));
    }
  }

  const li = el("li", { class: "todo" + (card ? " card" : "") + (opts.depth ? " sub" : ""), id: "todo-" + t.id,
                        "data-todo-id": t.id, "data-status": t.status,
                        "data-conversation": convKey(opts.conversation),
                        "data-group": card ? null : opts.group },
    el("div", { class: "lead" },
      person ? el("input", { type: "checkbox", class: "pick", "data-control": "select", disabled: busy,
                             "aria-label": "Select #" + t.id, checked: store.selected.has(t.id) }) : null,
      person ? el("span", { class: "handle", "data-control": "drag", draggable: "true",
                            title: card ? "Drag to another column" : "Drag to reorder", "aria-hidden": "true", text: "⋮⋮" })
        : null,
      el("span", { class: "id", text: "#" + t.id })), card ? " " : null,
    el("div", { class: "body" },
      line1,
      card ? el("div", { class: "list", "data-role": "list",
                         text: present(opts.conversation) ? opts.conversation : "Tenant-wide" }) : null,
      meta(t, opts.depth)),
    actions.childElementCount ? actions : null);
  // nested deeper than one step: indented by script (allowed by the page's policy)
  if (opts.depth > 1) li.style.paddingLeft = (14 + 24 * opts.depth) + "px";
  const error = store.errors.get(t.id);
  if (error) li.append(errorBox(error.text));
  return li;
}

/** The second line: what it is doing, who holds it, what it waits for, its subtasks, who
 *  it is assigned to, when and by whom it changed last. */
function meta(t, depth) {
  const m = el("div", { class: "meta" });
  if (t.status === "in_progress" && t.active_form) {
    m.append(el("span", { class: "active-form", "data-role": "active-form", text: "▶ " + t.active_form }));
  }
  if (t.claimed_by) {
    m.append(el("span", { class: "claim", "data-role": "claim", "data-claimed-by": t.claimed_by },
      "claimed by ", el("b", { text: t.claimed_by }), " · ", lease(t.lease_seconds_left, store.fetchedAt)));
  }
  if (Array.isArray(t.blocked_by) && t.blocked_by.length) {
    m.append(el("span", { class: "blocked-by", "data-role": "blocked-by",
                          text: "blocked by " + t.blocked_by.map((i) => "#" + i).join(", ") }));
  }
  if (t.subtasks && t.subtasks.total) {
    const bar = el("i");
    bar.style.width = Math.round(100 * t.subtasks.done / t.subtasks.total) + "%";
    m.append(el("span", { class: "subtasks", "data-role": "subtasks",
                          title: t.subtasks.done + " of " + t.subtasks.total + " subtasks done" },
      "subtasks " + t.subtasks.done + "/" + t.subtasks.total, el("span", { class: "mini" }, bar)));
  }
  if (present(t.parent_id) && !depth) {
    m.append(el("span", { class: "parent-of", "data-role": "parent", text: "↳ subtask of #" + t.parent_id }));
  }
  if (t.owner) m.append(el("span", { "data-role": "owner", text: "assignee " + t.owner }));
  if (Array.isArray(t.labels) && t.labels.length) {
    m.append(el("span", { class: "labels", "data-role": "labels" },
      ...t.labels.flatMap((l, i) => [i ? " " : null, el("span", { class: "label", text: l })])));
  }
  const day = dueDay(t.due_at);
  if (day) {
    const late = overdue(day, t.status, new Date(serverNow()).toISOString().slice(0, 10));
    m.append(el("span", { class: "due" + (late ? " overdue" : ""), "data-role": "due", "data-due": day,
                          text: (late ? "overdue · due " : "due ") + day }));
  }
  m.append(updated(t));
  return m;
}

/** "updated 5 min ago by agent-3", the exact time in the viewer's zone on hover. */
function updated(t) {
  const ago = secondsSince(t.updated_at);
  const by = t.updated_by || t.agent_id;   // who changed it last (its newest event), else who made it
  if (ago === null && !by) return null;
  return el("span", { class: "updated", "data-role": "updated", title: exactTime(t.updated_at) },
    el("span", { "data-role": "ago", "data-ago": ago }),
    by ? el("span", { "data-role": "agent", text: (ago === null ? "" : " ") + "by " + by }) : null);
}

/** A lease countdown: data-left is the seconds left when read (at readAt, ms of our clock),
 *  data-until when it ends on our clock; the 1 s tick writes its text. No lease: no data. */
export function lease(secondsLeft, readAt) {
  const has = present(secondsLeft);
  const s = el("span", { class: "lease", "data-role": "lease", "data-left": has ? secondsLeft : null,
                         "data-until": has ? Math.round(readAt + 1000 * secondsLeft) : null });
  showLease(s, Date.now());
  return s;
}

/** Writes a countdown's text ("4:05 left", "lease lapsed", "no lease") and classes (.low under
 *  a minute, .lapsed, and .lapsed on its todo). True when it lapsed since the board was read. */
export function showLease(s, now) {
  if (s.dataset.until === undefined) { setText(s, "no lease"); return false; }
  const left = (Number(s.dataset.until) - now) / 1000;
  const lapsed = left <= 0;
  const lapsedNow = lapsed && !s.classList.contains("lapsed") && Number(s.dataset.left) > 0;
  s.classList.toggle("lapsed", lapsed);
  s.classList.toggle("low", !lapsed && left < 60);
  const row = s.closest(".todo");
  if (row) row.classList.toggle("lapsed", lapsed);
  setText(s, lapsed ? "lease lapsed" : clock(Math.ceil(left)) + " left");
  return lapsedNow;
}

/** A refusal by a todo, as the store said it. */
export function errorBox(text) {
  return el("div", { class: "error", "data-role": "error", role: "alert", text });
}
