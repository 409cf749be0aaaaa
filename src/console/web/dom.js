// The one way the console builds its pages: elements from tag, properties and children, where every
// string child becomes a text node. Nothing is ever parsed as HTML, so whatever a stored name,
// option text, transcript or customer text holds, it is shown as text.
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value' || key === 'checked') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.append(child);
    else el.append(document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/**
 * Where the keyboard focus is inside root, to find it again once root is redrawn (a live update
 * redraws a page under the hands of someone using the keyboard): the control's tag, id and text,
 * and the request card (data-message-id) it belongs to. null: the focus is elsewhere.
 */
export function focusIn(root) {
  const el = document.activeElement;
  if (!(el instanceof HTMLElement) || el === root || !root.contains(el)) return null;
  return { tag: el.tagName, id: el.id, text: el.textContent, item: el.closest('[data-message-id]')?.getAttribute('data-message-id') ?? null };
}

/** Puts the focus back on the control focusIn saw, when the redrawn root has it again. */
export function restoreFocus(root, was) {
  if (was === null || root.contains(document.activeElement)) return;
  const candidates = was.id ? [document.getElementById(was.id)] : [...root.getElementsByTagName(was.tag)];
  const again = candidates.find(
    (c) =>
      c instanceof HTMLElement &&
      root.contains(c) &&
      c.textContent === was.text &&
      (c.closest('[data-message-id]')?.getAttribute('data-message-id') ?? null) === was.item,
  );
  again?.focus();
}

const SVG = 'http://www.w3.org/2000/svg';
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs ?? {})) if (value !== undefined && value !== null) el.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** "3 min", "1 h 05 min" from seconds. */
export function duration(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  const hours = Math.floor(m / 60);
  return `${hours} h ${String(m % 60).padStart(2, '0')} min`;
}

export function time(iso) {
  if (!iso) return '—';
  // A CFH record's closed_at is "YYYY-MM-DD HH:MM:SS" in UTC (contract section 4).
  const d = new Date(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(iso) ? `${iso.replace(' ', 'T')}Z` : iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function label(word) {
  return String(word ?? '').replace(/_/g, ' ');
}
