// Building elements. Text always goes in as text (textContent, text nodes), never as HTML.

/** The element with this id. */
export const $ = (id) => document.getElementById(id);

/**
 * A new element. attrs: "class" (className), "text" (textContent), "on<event>" (a listener,
 * added with addEventListener: never an inline handler attribute), any other key an attribute
 * (true: present and empty; null, undefined, false: left out). Children: nodes or strings
 * (text nodes); null, undefined and false are skipped.
 */
export function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (const k of kids) {
    if (k !== null && k !== undefined && k !== false) e.append(typeof k === "string" ? document.createTextNode(k) : k);
  }
  return e;
}

/** Shows or hides an element (the `hidden` class). */
export function show(e, shown) {
  e.classList.toggle("hidden", !shown);
}

/** Sets an element's text only when it differs (the 1 s tick writes nothing that did not change). */
export function setText(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

/** A CSS attribute selector's quoted value. */
export const q = (v) => '"' + CSS.escape(String(v)) + '"';
