// What the page says besides the board: the one polite live region (#announce), the
// confirmation dialog (#confirm) and the undo toast (#toast).

import { $, el, show } from "./dom.js";
import * as focus from "./focus.js";

const TOAST_MS = 10000;

/** Says a sentence to screen readers, politely (the page's one live region). */
export function announce(text) {
  const region = $("announce");
  // emptied first, so that the same sentence twice is said twice
  region.textContent = "";
  requestAnimationFrame(() => { region.textContent = text; });
}

/**
 * Asks for a confirmation in the modal #confirm dialog (role=alertdialog): resolves true when
 * the person picks `yes`, false on `no` or Escape. Focus starts on `no` (the safe choice) and
 * returns where it was.
 */
export function confirmDialog({ title, text, yes, no }) {
  const dialog = $("confirm");
  const back = document.activeElement;
  const backKey = focus.keyOf(back);   // found again if a refresh replaces it meanwhile
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  $("confirm-no").textContent = no;
  return new Promise((resolve) => {
    let answer = false;
    const pick = (v) => () => { answer = v; dialog.close(); };
    const onYes = pick(true), onNo = pick(false);
    $("confirm-yes").addEventListener("click", onYes);
    $("confirm-no").addEventListener("click", onNo);
    dialog.addEventListener("close", () => {
      $("confirm-yes").removeEventListener("click", onYes);
      $("confirm-no").removeEventListener("click", onNo);
      if (back && back.isConnected) back.focus();
      else focus.restore(backKey);
      resolve(answer);
    }, { once: true });
    dialog.showModal();
    $("confirm-no").focus();
  });
}

let toastTimer = null;
let toastLeft = 0;
let toastFrom = 0;

/**
 * Shows "<text> · <button>" at the bottom for 10 s (the time stops while the pointer or the
 * focus is on it); the button ({text, label}: its accessible name), when given, calls onPress
 * and hides the toast. The text is announced. Returns the button (or null).
 */
export function toast(text, button, onPress) {
  const box = $("toast");
  box.textContent = "";
  box.append(el("span", { text }));
  let press = null;
  if (button) {
    press = el("button", { type: "button", class: "primary", "aria-label": button.label, text: button.text,
                           onclick: () => { hideToast(); onPress(); } });
    box.append(" · ", press);
  }
  show(box, true);
  announce(text);
  toastLeft = TOAST_MS;
  runToast();
  return press;
}

function runToast() {
  clearTimeout(toastTimer);
  toastFrom = Date.now();
  toastTimer = setTimeout(hideToast, toastLeft);
}

function pauseToast() {
  if (!toastTimer) return;
  clearTimeout(toastTimer);
  toastTimer = null;
  toastLeft = Math.max(1000, toastLeft - (Date.now() - toastFrom));
}

function hideToast() {
  clearTimeout(toastTimer);
  toastTimer = null;
  const box = $("toast");
  const hadFocus = box.contains(document.activeElement);
  show(box, false);
  box.textContent = "";
  if (hadFocus) $("main").focus();   // not lost to the body
}

/** Wires the toast's pause on hover and focus. */
export function wireToast() {
  const box = $("toast");
  box.addEventListener("mouseenter", pauseToast);
  box.addEventListener("focusin", pauseToast);
  box.addEventListener("mouseleave", () => { if (!box.contains(document.activeElement)) resumeToast(); });
  box.addEventListener("focusout", (ev) => { if (!box.contains(ev.relatedTarget) && !box.matches(":hover")) resumeToast(); });
}

function resumeToast() {
  if (!toastTimer && !$("toast").classList.contains("hidden")) runToast();
}
