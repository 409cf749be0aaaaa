// A display's printable sheet (section 18): its QR code (getDisplayQr's SVG of the customer page's
// URL), the store's name and the options' texts, on A4 or Letter (style.css's @page rules; the
// person picks the paper, the browser prints). Reached only in the moment the display's key is
// shown, when it is made or rotated: the key is stored hashed, so the sheet cannot be made later.
import { ApiError } from '../api.js';
import { h, mount } from '../dom.js';

/** The SVG as an image (a data: URL: the page's policy allows no other), never as markup. */
async function qrImage(url) {
  const res = await fetch(url, { credentials: 'same-origin', headers: { accept: 'image/svg+xml' } });
  if (!res.ok) {
    let body = null;
    try {
      body = await res.json();
    } catch {
      body = null;
    }
    throw new ApiError(res.status, body);
  }
  const svg = await res.text();
  const data = `data:image/svg+xml;base64,${btoa(String.fromCharCode(...new TextEncoder().encode(svg)))}`;
  return h('img', { class: 'qr', src: data, alt: 'QR code of the customer page' });
}

/**
 * Opens the sheet over the console: `qrUrl` the getDisplayQr address (with the key it needs),
 * `pageUrl` what the code holds (shown under it), the store's name and the options' texts (in
 * English and French). "Print" prints it; "Close" returns to Setup.
 */
export async function openQrSheet({ qrUrl, pageUrl, storeName, displayName, options }) {
  const img = await qrImage(qrUrl);
  const paper = h(
    'select',
    {
      id: 'sheet-paper',
      onchange: () => {
        sheet.dataset.paper = paper.value;
      },
    },
    h('option', { value: 'a4' }, 'A4'),
    h('option', { value: 'letter', selected: /^en-(US|CA)$/.test(navigator.language) }, 'Letter'),
  );
  const close = h('button', { type: 'button', class: 'secondary', id: 'sheet-close' }, 'Close');
  const sheet = h(
    'article',
    { class: 'qr-sheet', 'aria-label': 'Printable sheet' },
    h('p', { class: 'sheet-store' }, storeName),
    h('h2', { class: 'sheet-title' }, 'Need help? Scan me.', h('span', { lang: 'fr' }, ' Besoin d’aide ? Scannez-moi.')),
    img,
    h(
      'ul',
      { class: 'sheet-options' },
      options.map((o) => h('li', {}, h('span', {}, o.text_en), ' · ', h('span', { lang: 'fr' }, o.text_fr))),
    ),
    h('p', { class: 'sheet-url' }, pageUrl),
    h('p', { class: 'sheet-name muted' }, displayName),
  );
  sheet.dataset.paper = paper.value;
  const overlay = h(
    'div',
    { class: 'sheet-overlay', role: 'dialog', 'aria-modal': 'true', 'aria-label': `QR sheet of ${displayName}` },
    h(
      'div',
      { class: 'sheet-tools' },
      h('label', { for: 'sheet-paper' }, 'Paper'),
      paper,
      h('button', { type: 'button', class: 'primary', id: 'sheet-print', onclick: () => window.print() }, 'Print'),
      close,
    ),
    sheet,
  );
  document.body.classList.add('printing-sheet');
  document.body.append(overlay);
  return new Promise((resolve) => {
    const done = () => {
      document.body.classList.remove('printing-sheet');
      overlay.remove();
      document.removeEventListener('keydown', onKey);
      resolve();
    };
    const onKey = (e) => {
      if (e.key === 'Escape') done();
    };
    close.addEventListener('click', done);
    document.addEventListener('keydown', onKey);
    paper.focus();
  });
}

/** The sheet's button in a "shown once" dialog: it closes the dialog, then opens the sheet. */
export function sheetButton(open) {
  const button = h('button', { type: 'button', class: 'secondary', id: 'print-sheet' }, 'Print the QR sheet');
  button.addEventListener('click', async () => {
    button.closest('dialog')?.close();
    try {
      await open();
    } catch (err) {
      const main = document.getElementById('main');
      mount(main.querySelector('.setup-body') ?? main, h('p', { class: 'error', role: 'alert' }, err.message));
    }
  });
  return button;
}
