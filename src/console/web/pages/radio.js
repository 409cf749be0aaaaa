// The location's radio: per edge device, what was played and heard (newest first, audio playable),
// and a box to type an announcement.
import { act, post } from '../api.js';
import { h, label, mount, time } from '../dom.js';
import { badge, empty, livePage } from './common.js';

export function radioPage(container, { locationId }) {
  const drafts = new Map();
  return livePage(container, {
    title: 'Radio',
    url: () => `/console/api/locations/${locationId}/radio`,
    kinds: ['radio'],
    render: (body, data, ctx) => {
      // A refresh while someone types keeps what they typed and where the focus was.
      const focused = document.activeElement?.id;
      mount(body, data.edges.length === 0 ? empty('This store has no radio.') : data.edges.map((e) => edgeSection(e, drafts, ctx)));
      if (focused) document.getElementById(focused)?.focus();
    },
  });
}

function edgeSection(edge, drafts, ctx) {
  const id = `announce-${edge.edge_id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const text = h('textarea', {
    id,
    rows: 2,
    maxlength: 500,
    required: true,
    placeholder: 'Type what to say on the radio',
    oninput: () => drafts.set(edge.edge_id, text.value),
  });
  text.value = drafts.get(edge.edge_id) ?? '';
  const send = h('button', { type: 'submit', class: 'primary' }, 'Announce');
  const form = h(
    'form',
    {
      class: 'announce',
      onsubmit: async (ev) => {
        ev.preventDefault();
        const value = text.value.trim();
        if (value === '') return;
        send.disabled = true;
        const done = await act(() => post(`/console/api/radio/${encodeURIComponent(edge.edge_id)}/announce`, { text: value }), 'Announcement sent');
        send.disabled = false;
        if (done) {
          drafts.delete(edge.edge_id);
          text.value = '';
          ctx.reload();
        }
      },
    },
    h('label', { for: id }, `Announce on ${edge.name}`),
    text,
    send,
  );
  return h(
    'section',
    { class: 'edge', 'aria-label': edge.name },
    h('h2', {}, edge.name),
    form,
    edge.entries.length === 0
      ? empty('Nothing played or heard yet.')
      : h(
          'ol',
          { class: 'transcripts' },
          edge.entries.map((t) => entry(edge, t)),
        ),
  );
}

function entry(edge, t) {
  const heard = t.kind === 'heard';
  const who = heard ? (t.speaker ?? 'Someone on the radio') : (t.actor ?? '');
  return h(
    'li',
    { class: `transcript ${t.kind}` },
    h(
      'div',
      { class: 'row meta' },
      badge(heard ? 'heard' : 'announcement', heard ? 'info' : ''),
      heard ? null : badge(label(t.status), t.status === 'played' ? 'good' : t.status === 'queued' ? 'warn' : 'bad'),
      !heard && t.priority === 'urgent' ? badge('urgent', 'bad') : null,
      heard && t.intent && t.intent !== 'none' ? badge(label(t.intent), 'info') : null,
      h('span', { class: 'muted' }, who),
      h('time', { datetime: t.at, class: 'muted' }, time(t.at)),
    ),
    h('p', { class: 'text' }, t.text),
    !heard && t.has_audio
      ? h('audio', {
          controls: true,
          preload: 'none',
          src: `/console/api/radio/${encodeURIComponent(edge.edge_id)}/messages/${encodeURIComponent(t.id)}/audio`,
        })
      : null,
  );
}
