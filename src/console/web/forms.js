// The administration pages' one form layer: fields from a list of specs, the body they make, the
// API's 422 errors beside the fields they name, a 412 version conflict that offers to reload, and
// a secret shown once with a copy button. The service is the one validator (the forms are
// `novalidate`): what it refuses is said where the person typed it, in its own words, so the
// console can never accept what the API refuses or refuse what it accepts.
//
// A field spec: { name, label, type, hint, required, min, max, maxlength, pattern, choices, empty }
//   type: text (default), email, number, checkbox, select, checks (several choices), textarea, rows
//   choices: [{ value, text }] of a select or checks (values keep their type: numbers stay numbers)
//   empty: what an empty text or number sends: 'omit' (default when not required), null, or ''
//   rows: { fields, add } a list of objects (a locker's cabinets), one line of fields each, whose
//         fields are named as the service names them in its errors: `cabinets[0].key`
// A group spec { group, columns, fields } lays fields side by side (English and French).
import { ApiError } from './api.js';
import { h, mount } from './dom.js';

let formCount = 0;

/** A field's element id within its form. */
const idOf = (form, name) => `${form}-${name.replace(/[^a-zA-Z0-9_-]/g, '-')}`;

function control(formId, spec, value, name = spec.name) {
  const id = idOf(formId, name);
  const common = { id, name, dataset: { field: name }, 'aria-describedby': spec.hint ? `${id}-hint` : null };
  switch (spec.type) {
    case 'checkbox':
      return h('input', { ...common, type: 'checkbox', checked: value === true });
    case 'select':
      return h(
        'select',
        { ...common, required: spec.required ?? false },
        spec.required && value === undefined ? h('option', { value: '' }, 'Choose…') : null,
        spec.nullable ? h('option', { value: '', selected: value === null }, spec.nullable) : null,
        spec.choices.map((c, i) => h('option', { value: String(i), selected: c.value === value }, c.text)),
      );
    case 'checks':
      return h(
        'fieldset',
        { ...common, class: 'checks' },
        h('legend', {}, spec.label),
        spec.choices.length === 0 ? h('p', { class: 'muted' }, spec.none ?? 'Nothing to choose yet.') : null,
        spec.choices.map((c, i) =>
          h(
            'label',
            { class: 'check' },
            h('input', { type: 'checkbox', value: String(i), checked: Array.isArray(value) && value.includes(c.value), dataset: { of: name } }),
            ` ${c.text}`,
          ),
        ),
      );
    case 'textarea':
      return h('textarea', { ...common, rows: 3, maxlength: spec.maxlength ?? null, required: spec.required ?? false, value: value ?? '' });
    default:
      return h('input', {
        ...common,
        type: spec.type ?? 'text',
        inputmode: spec.type === 'number' ? 'numeric' : null,
        required: spec.required ?? false,
        min: spec.min ?? null,
        max: spec.max ?? null,
        maxlength: spec.maxlength ?? null,
        pattern: spec.pattern ?? null,
        autocomplete: spec.autocomplete ?? 'off',
        value: value === null || value === undefined ? '' : String(value),
      });
  }
}

/** A labelled field with its hint and the place its errors go. */
function fieldBlock(formId, spec, values, prefix = '') {
  if (spec.group !== undefined) {
    return h(
      'fieldset',
      { class: `group cols-${spec.columns ?? spec.fields.length}` },
      h('legend', {}, spec.group),
      spec.fields.map((f) => fieldBlock(formId, f, values, prefix)),
    );
  }
  const name = `${prefix}${spec.name}`;
  const value = values?.[spec.name];
  if (spec.type === 'rows') return rowsBlock(formId, spec, value ?? [], name);
  const id = idOf(formId, name);
  const input = control(formId, spec, value, name);
  return h(
    'div',
    { class: `field field-${spec.type ?? 'text'}`, dataset: { for: name } },
    spec.type === 'checks'
      ? null
      : spec.type === 'checkbox'
        ? null
        : h('label', { for: id }, spec.label, spec.required ? null : h('span', { class: 'muted' }, ' (optional)')),
    spec.type === 'checkbox' ? h('label', { class: 'check', for: id }, input, ` ${spec.label}`) : input,
    spec.hint ? h('p', { class: 'hint muted', id: `${id}-hint` }, spec.hint) : null,
    h('p', { class: 'field-error', id: `${id}-error`, hidden: true }),
  );
}

/** A list of objects, one line of fields each, with "add" and "remove". */
function rowsBlock(formId, spec, rows, name) {
  const list = h('div', { class: 'rows' });
  const addRow = (row) => {
    const i = list.children.length;
    const line = h(
      'div',
      { class: 'row-line', dataset: { row: String(i), id: row.id === undefined ? '' : String(row.id) } },
      spec.fields.map((f) => fieldBlock(formId, f, row, `${name}[${i}].`)),
      h(
        'button',
        { type: 'button', class: 'secondary remove', 'aria-label': `Remove ${spec.item ?? 'line'} ${i + 1}`, onclick: () => line.remove() },
        'Remove',
      ),
    );
    list.append(line);
  };
  for (const row of rows) addRow(row);
  return h(
    'fieldset',
    { class: 'rows-field', dataset: { field: name, rows: name } },
    h('legend', {}, spec.label),
    list,
    h('button', { type: 'button', class: 'secondary', onclick: () => addRow(spec.blank?.(list.children.length) ?? {}) }, spec.add ?? 'Add'),
    h('p', { class: 'field-error', id: `${idOf(formId, name)}-error`, hidden: true }),
  );
}

function readField(form, spec, name) {
  const el = form.querySelector(`[data-field="${CSS.escape(name)}"]`);
  if (el === null) return undefined;
  switch (spec.type) {
    case 'checkbox':
      return el.checked;
    case 'select':
      return el.value === '' ? (spec.nullable ? null : undefined) : spec.choices[Number(el.value)]?.value;
    case 'checks':
      return [...el.querySelectorAll('input[type=checkbox]')].filter((c) => c.checked).map((c) => spec.choices[Number(c.value)].value);
    default: {
      const text = spec.type === 'password' ? el.value : el.value.trim();
      const empty = spec.empty ?? (spec.required ? '' : 'omit');
      if (text === '') return empty === 'omit' ? undefined : empty;
      // A number the service cannot read as one is sent as typed: its 422 says what is wrong.
      return spec.type === 'number' && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    }
  }
}

function readSpecs(form, specs, prefix, into) {
  for (const spec of specs) {
    if (spec.group !== undefined) {
      readSpecs(form, spec.fields, prefix, into);
      continue;
    }
    const name = `${prefix}${spec.name}`;
    if (spec.type === 'rows') {
      const box = form.querySelector(`[data-rows="${CSS.escape(name)}"] .rows`);
      into[spec.name] = [...box.children].map((line) => {
        const row = {};
        readSpecs(line, spec.fields, `${name}[${line.dataset.row}].`, row);
        if (line.dataset.id !== '') row.id = Number(line.dataset.id);
        return row;
      });
      continue;
    }
    const value = readField(form, spec, name);
    if (value !== undefined) into[spec.name] = value;
  }
  return into;
}

/** Clears what the last answer said on the form. */
function clearErrors(form) {
  for (const p of form.querySelectorAll('.field-error')) {
    p.hidden = true;
    p.textContent = '';
  }
  for (const el of form.querySelectorAll('[aria-invalid]')) {
    el.removeAttribute('aria-invalid');
    el.setAttribute('aria-describedby', (el.getAttribute('aria-describedby') ?? '').replace(/\s*\S+-error$/, '').trim() || '');
  }
  mount(form.querySelector('.form-notice'));
}

/**
 * The 422's errors beside their fields: `cabinets.1.key` goes beside that cabinet's key, or the
 * nearest field that holds it; what names no field shown here is listed at the top. Focus goes to
 * the first field in error.
 */
export function showFieldErrors(form, errors, message) {
  const loose = [];
  let first = null;
  for (const [field, texts] of Object.entries(errors ?? {})) {
    // The service names fields as `cabinets[1].key`: that field, else the nearest that holds it.
    let path = field;
    let el = null;
    while (path !== '' && el === null) {
      el = form.querySelector(`[data-field="${CSS.escape(path)}"]`);
      if (el !== null) break;
      const parent = path.replace(/(\.[^.[\]]+|\[\d+\])$/, '');
      path = parent === path ? '' : parent;
    }
    const text = texts.join('; ');
    if (el === null) {
      loose.push(`${field.replace(/_/g, ' ')}: ${text}`);
      continue;
    }
    const errorId = `${el.id || idOf(form.id, el.dataset.field)}-error`;
    const p = form.querySelector(`#${CSS.escape(errorId)}`) ?? el.closest('.field, .rows-field')?.querySelector('.field-error');
    if (p) {
      p.hidden = false;
      p.textContent = p.textContent ? `${p.textContent}; ${text}` : text;
      el.setAttribute('aria-invalid', 'true');
      el.setAttribute('aria-describedby', `${el.getAttribute('aria-describedby') ?? ''} ${p.id}`.trim());
    }
    first ??= el.matches('fieldset') ? el.querySelector('input, select, textarea') : el;
  }
  notice(
    form,
    'error',
    message ?? 'Some fields need correcting.',
    loose.length > 0
      ? h(
          'ul',
          {},
          loose.map((l) => h('li', {}, l)),
        )
      : null,
  );
  (first ?? form.querySelector('.form-notice'))?.focus();
}

function notice(form, kind, text, ...more) {
  const box = form.querySelector('.form-notice');
  mount(box, h('div', { class: `notice-box ${kind}`, role: 'alert', tabindex: '-1' }, h('p', {}, text), ...more));
}

/**
 * A form of fields. `send(body)` calls the service; `done(result)` runs when it answered 2xx.
 * `reload()` reads the object again (its fresh values) for a 412's "Reload"; without it, no offer.
 */
export function adminForm({ id, fields, values = {}, submit = 'Save', send, done, reload = null, cancel = null, intro = null }) {
  const formId = id ?? `form-${++formCount}`;
  const body = h('div', { class: 'form-fields' });
  const button = h('button', { type: 'submit', class: 'primary' }, submit);
  const form = h(
    'form',
    { id: formId, class: 'admin-form', novalidate: true },
    intro,
    h('div', { class: 'form-notice' }),
    body,
    h('div', { class: 'actions' }, cancel ? h('button', { type: 'button', class: 'secondary', onclick: cancel }, 'Cancel') : null, button),
  );
  const draw = (v) =>
    mount(
      body,
      fields.map((f) => fieldBlock(formId, f, v)),
    );
  draw(values);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    button.disabled = true;
    try {
      const result = await send(readSpecs(form, fields, '', {}));
      await done?.(result);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status === 401) return;
      if (err.status === 422) showFieldErrors(form, err.errors, err.message);
      else if (err.status === 412) versionConflict(form, reload, draw);
      else {
        notice(form, 'error', err.message);
        form.querySelector('.form-notice [role=alert]')?.focus();
      }
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

/** 412: someone else changed the object since it was read. Nothing was saved; "Reload" reads it
 * again and shows its current values, in place of what was typed. */
function versionConflict(form, reload, draw) {
  const again = reload
    ? h(
        'button',
        {
          type: 'button',
          class: 'primary',
          onclick: async () => {
            const fresh = await reload();
            draw(fresh);
            clearErrors(form);
            notice(form, 'info', 'Reloaded: these are the current values. Make your change again.');
            form.querySelector('input, select, textarea')?.focus();
          },
        },
        'Reload',
      )
    : null;
  notice(form, 'warn', 'Someone else changed this while you were editing it. Nothing was saved.', again ? h('p', {}, again, ' to see their version.') : null);
  (again ?? form.querySelector('.form-notice [role=alert]')).focus();
}

/** A modal form (native <dialog>: focus kept inside, Escape closes). Resolves with the result of
 * a successful send, or null when closed without one. */
export function formDialog({ title, ...opts }) {
  return new Promise((resolve) => {
    let result = null;
    const dialog = h('dialog', { class: 'form-dialog', 'aria-labelledby': 'form-dialog-title' });
    const form = adminForm({
      ...opts,
      cancel: () => dialog.close(),
      done: async (r) => {
        result = r;
        await opts.done?.(r);
        dialog.close();
      },
    });
    mount(dialog, h('h2', { id: 'form-dialog-title' }, title), form);
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(result);
    });
    document.body.append(dialog);
    dialog.showModal();
    form.querySelector('input:not([type=hidden]), select, textarea')?.focus();
  });
}

/**
 * A secret the service shows once (a token, a one-time password, a key): in a dialog with a copy
 * button and the warning that it cannot be shown again. `more` adds actions (print a QR sheet).
 */
export function showSecretOnce({ title, label, value, note = null, more = [] }) {
  return new Promise((resolve) => {
    const input = h('input', { id: 'secret-value', type: 'text', readonly: true, value, class: 'secret-value', spellcheck: 'false', autocomplete: 'off' });
    const copied = h('span', { class: 'muted', role: 'status' });
    const copy = async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(value);
      } catch {
        document.execCommand('copy');
      }
      copied.textContent = 'Copied.';
    };
    const dialog = h(
      'dialog',
      { class: 'form-dialog secret-once', 'aria-labelledby': 'secret-title' },
      h('h2', { id: 'secret-title' }, title),
      h('p', { class: 'notice-box warn', role: 'note' }, 'Shown once: copy it now. It is stored only as a hash and cannot be shown again.'),
      note ? h('p', {}, note) : null,
      h('label', { for: 'secret-value' }, label),
      h('div', { class: 'copy-line' }, input, h('button', { type: 'button', class: 'secondary', id: 'copy-secret', onclick: copy }, 'Copy'), copied),
      h('div', { class: 'actions' }, more, h('button', { type: 'button', class: 'primary', onclick: () => dialog.close() }, 'Done, I have kept it')),
    );
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve();
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
    input.select();
  });
}

/** Choices from objects: [{ value: o.id, text: o.name }]. */
export const choicesOf = (items, text = (o) => o.name, value = (o) => o.id) => items.map((o) => ({ value: value(o), text: text(o) }));
