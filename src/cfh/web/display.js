// The display's page (GET /help/{display_key}, pages.ts): each option's button, and the free text
// when the display allows one, asks C9 for a request, then opens the request's tracking page.
// The page gives the display's key, the texts and its language in #page-data.
const { key, texts, lang } = JSON.parse(document.getElementById('page-data').textContent);
const error = document.getElementById('error');

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
      body: JSON.stringify(body),
    });
    if (res.status === 201) {
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
