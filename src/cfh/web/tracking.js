// The tracking page (GET /help/t/{message_id}, pages.ts): the request's state, kept live by C6
// (EventSource; polling C5 every 5 seconds when the stream is refused, until the request is closed), and the cancel
// button (C4) while the request is open. The page gives the message id and the texts in #page-data.
const { messageId, texts } = JSON.parse(document.getElementById('page-data').textContent);
const state = document.getElementById('state');
const cancel = document.getElementById('cancel');
const error = document.getElementById('error');

function show(view) {
  const r = view.cfh_request;
  const name = r.claimed_by == null || r.claimed_by === 'An associate' ? texts.associate : r.claimed_by;
  const sentence = r.status === 'created' ? texts.received : texts[r.status] || texts.received;
  state.textContent = sentence.replace('{name}', name);
  state.dataset.status = r.status;
  cancel.hidden = r.is_closed;
  // A closed request changes no more: its stream ends (the service ends it) and polling stops.
  if (r.is_closed) {
    stream.close();
    clearInterval(poll);
  }
}

const query = 'message_id=' + encodeURIComponent(messageId);

async function refresh() {
  const res = await fetch('/api/callforhelp/v1/tracking?' + query);
  if (res.ok) show(await res.json());
}

let poll = null;
const stream = new EventSource('/api/callforhelp/v1/tracking/stream?' + query);
stream.addEventListener('status', (e) => show(JSON.parse(e.data)));
stream.onerror = () => {
  if (stream.readyState === EventSource.CLOSED && !poll) poll = setInterval(refresh, 5000);
};

function failed() {
  error.textContent = texts.failed;
  error.hidden = false;
}

cancel.addEventListener('click', async () => {
  cancel.disabled = true;
  try {
    const res = await fetch('/api/callforhelp/cancel', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message_id: messageId }),
    });
    if (res.ok) await refresh();
    else failed();
  } catch {
    failed();
  }
  cancel.disabled = false;
});
