// The display's page (GET /help/{display_key}, pages.ts): each option's button, and the free text
// when the display allows one, asks C9 for a request, then opens the request's tracking page.
// The page gives the display's key, the texts and its language in #page-data.
const { key, texts, lang } = JSON.parse(document.getElementById('page-data').textContent);
const error = document.getElementById('error');

// The browser's id (128 random bits, base64url) goes with every request: the cooldown is this
// browser's, not everyone's on the store's guest network, and asking again while its request is
// open leads back to that request. Kept in localStorage; where storage is refused (some private
// modes), one id per page load.
const BROWSER_ID_KEY = 'storeops.browser_id';
function newBrowserId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}
const pageBrowserId = newBrowserId();
function browserId() {
  try {
    const kept = localStorage.getItem(BROWSER_ID_KEY);
    if (kept !== null && /^[A-Za-z0-9_-]{22,64}$/.test(kept)) return kept;
    const id = newBrowserId();
    localStorage.setItem(BROWSER_ID_KEY, id);
    return id;
  } catch {
    return pageBrowserId;
  }
}

function setButtonsDisabled(disabled) {
  document.querySelectorAll('button').forEach((b) => (b.disabled = disabled));
}

async function ask(body) {
  error.hidden = true;
  setButtonsDisabled(true);
  try {
    const res = await fetch('/api/callforhelp/displays/' + encodeURIComponent(key) + '/requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, browser_id: browserId() }),
    });
    // 201: a new request; 200: this browser's request that is still open.
    if (res.status === 201 || res.status === 200) {
      const record = await res.json();
      location.assign('/help/t/' + encodeURIComponent(record.message_id) + '?lang=' + lang);
      return;
    }
    error.textContent = res.status === 429 ? texts.wait : res.status === 422 ? texts.refused : texts.failed;
  } catch {
    error.textContent = texts.failed;
  }
  error.hidden = false;
  setButtonsDisabled(false);
}

document.querySelectorAll('button[data-option]').forEach((b) => b.addEventListener('click', () => ask({ option_id: Number(b.dataset.option) })));

const free = document.getElementById('free');
if (free) {
  free.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = document.getElementById('text').value.trim();
    if (text) ask({ custom_text: text });
  });
}
