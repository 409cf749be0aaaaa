// Chat cards (section 20) through the service, to a fake Slack and a fake Teams receiver on
// loopback (the real platforms are on the internet): each CFH status is a new message saying what
// changed, with the option, the place, the waiting time, the status, who has it, the customer's
// words escaped for the platform, and a button opening the staff app at that request; the payloads
// pass the platforms' own checks (chat-schemas.ts); no signature and no secret travel; retries after
// 500s and the address rules are those of signed endpoints; testWebhook sends a card too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { applyProvisioning } from '../../src/provisioning/apply.ts';
import { shownUrl } from '../../src/webhooks/endpoint-rules.ts';
import { ann, cfhClient, success } from '../cfh/support.ts';
import { adminWorld, call, sessionOf, type AdminWorld } from '../people/admin-support.ts';
import { freshId, otherInstanceDb, testApp, type TestContext } from '../support/world.ts';
import { adaptiveCardProblems, slackMessageProblems } from './chat-schemas.ts';
import { deliverNow, deliveriesOf, Receiver, webhookApp } from './support.ts';

const HOSTILE = '<!here> see <http://evil.example|your order> or [click](http://evil.example) **now** & _x_';

interface Store {
  w: AdminWorld;
  displayKey: string;
}

/** An organization whose location A has a display "Paint counter" taking typed text, in `language`. */
async function store(ctx: TestContext, language: 'en' | 'fr'): Promise<Store> {
  const w = await adminWorld(ctx.db, ctx.clock);
  const displayKey = `display-${freshId()}-0123456789abcdef`;
  await applyProvisioning(ctx.db, ctx.clock, {
    locations: [{ id: w.locationId, organization_id: w.organizationId, name: 'Store 10', store_number: '010', language }],
    cfh_displays: [{ id: freshId(), location_id: w.locationId, name: 'Paint counter', key: displayKey, option_ids: [w.optionId], allow_custom_text: true }],
  });
  return { w, displayKey };
}

async function chatEndpoint(ctx: TestContext, w: AdminWorld, format: 'slack' | 'teams', url: string): Promise<number> {
  const made = await call(ctx.app, await sessionOf(ctx.app, w.admin), 'POST', '/api/admin/webhooks', {
    url,
    format,
    location_id: w.locationId,
    events: ['callforhelp'],
  });
  assert.equal(made.statusCode, 201, made.body);
  assert.equal(made.json().secret, undefined, 'a chat endpoint has no secret to show');
  return made.json().id as number;
}

async function customerAsks(ctx: TestContext, displayKey: string, text: string): Promise<string> {
  const res = await ctx.app.inject({ method: 'POST', url: `/api/callforhelp/displays/${displayKey}/requests`, payload: { custom_text: text } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().message_id as string;
}

test('Slack: each status is a new Block Kit message with the facts, escaped text and the staff app button; no signature, no secret', async (t) => {
  const ctx = await webhookApp({ t, clock: new ManualClock(new Date()) });
  const { w, displayKey } = await store(ctx, 'en');
  const slack = await Receiver.start(t);
  const endpointId = await chatEndpoint(ctx, w, 'slack', slack.url);
  const messageId = await customerAsks(ctx, displayKey, HOSTILE);
  ctx.clock.advance(185_000);
  assert.equal(success(await cfhClient(ctx.app, w.token).claim(messageId, ann)), true);
  await deliverNow(ctx);

  assert.equal(slack.received.length, 2);
  const [created, claimed] = slack.received.map((d) => d.body as unknown as { text: string; blocks: Record<string, unknown>[] });
  for (const d of slack.received) {
    assert.deepEqual(slackMessageProblems(d.body), [], d.raw);
    assert.equal(d.headers['x-signature'], undefined, 'not signed: the URL is the secret');
    assert.equal(d.headers['content-type'], 'application/json');
  }
  const [row] = await ctx.db.query<{ secret: string }>('SELECT secret FROM webhook_endpoints WHERE id = $1', [endpointId]);
  assert.ok(row !== undefined && !slack.received.some((d) => d.raw.includes(row.secret)), 'no secret in a card');

  assert.deepEqual(created?.blocks[0], { type: 'header', text: { type: 'plain_text', text: 'New request: Help', emoji: false } });
  assert.deepEqual(
    (created?.blocks[1]?.fields as { text: string }[]).map((f) => f.text),
    ['*Option*\nHelp', '*Place*\nPaint counter (display)', '*Waiting time*\n0 s', '*Status*\nWaiting', '*Who has it*\nNobody yet'],
  );
  const said = JSON.stringify(created?.blocks);
  assert.ok(!said.includes('<!here>') && !said.includes('<http://evil.example|'), 'nothing can ping the channel or hide a link');
  assert.match((created?.blocks[2]?.text as { text: string }).text, /&lt;!here&gt; see &lt;http:\/\/evil\.example\|your order&gt;/);
  assert.match((created?.blocks[2]?.text as { text: string }).text, /&amp; _x_$/);
  const button = (created?.blocks.at(-1)?.elements as { url: string; text: { text: string } }[])[0];
  assert.equal(button?.url, `${ctx.config.publicBaseUrl}/staff/r/${messageId}`);
  assert.equal(button?.text.text, 'Open in the staff app');

  assert.equal((claimed?.blocks[0]?.text as { text: string }).text, 'Ann has it: Help', 'a later status says what changed');
  assert.deepEqual(
    (claimed?.blocks[1]?.fields as { text: string }[]).slice(2).map((f) => f.text),
    ['*Waiting time*\n3 min', '*Status*\nClaimed', '*Who has it*\nAnn'],
  );
  assert.match(claimed?.text ?? '', /^Ann has it: Help · Store 10 · 010$/);

  // Saved, the URL (the credential) is shown masked.
  const listed = await call(ctx.app, await sessionOf(ctx.app, w.admin), 'GET', '/api/admin/webhooks');
  const shown = listed.json().find((e: { id: number }) => e.id === endpointId).url as string;
  assert.equal(shown, `http://127.0.0.1:${new URL(slack.url).port}/…`, 'a short path shows none of itself');
  assert.equal(shownUrl('https://hooks.slack.com/services/T0001/B0002/abcdefghijklmnopqrstuvwx', 'slack'), 'https://hooks.slack.com/…uvwx');
});

test('Teams: a French store gets an Adaptive Card in a Workflows message, in French, with Markdown escaped and the staff app action', async (t) => {
  const ctx = await webhookApp({ t, clock: new ManualClock(new Date()) });
  const { w, displayKey } = await store(ctx, 'fr');
  const teams = await Receiver.start(t);
  await chatEndpoint(ctx, w, 'teams', teams.url);
  const messageId = await customerAsks(ctx, displayKey, HOSTILE);
  ctx.clock.advance(30_000);
  assert.equal(success(await cfhClient(ctx.app, w.token).onTheWay(messageId, ann)), true);
  await deliverNow(ctx);

  assert.equal(teams.received.length >= 2, true, teams.received.map((d) => d.raw).join('\n'));
  for (const d of teams.received) {
    const message = d.body as unknown as { type: string; attachments: { contentType: string; contentUrl: null; content: unknown }[] };
    assert.equal(message.type, 'message');
    assert.equal(message.attachments.length, 1);
    assert.equal(message.attachments[0]?.contentType, 'application/vnd.microsoft.card.adaptive');
    assert.deepEqual(adaptiveCardProblems(message.attachments[0]?.content), [], d.raw);
    assert.equal(d.headers['x-signature'], undefined);
  }
  type Card = { body: { type: string; text?: string; facts?: { title: string; value: string }[] }[]; actions: { type: string; url: string; title: string }[] };
  const cards = teams.received.map((d) => (d.body as unknown as { attachments: { content: Card }[] }).attachments[0]?.content as Card);
  const [first, last] = [cards[0] as Card, cards.at(-1) as Card];
  assert.equal(first.body[0]?.text, 'Nouvelle demande : Aide');
  assert.deepEqual(first.body[1]?.facts, [
    { title: 'Option', value: 'Aide' },
    { title: 'Emplacement', value: 'Paint counter \\(affichette\\)' },
    { title: "Temps d'attente", value: '0 s' },
    { title: 'Statut', value: 'En attente' },
    { title: "Qui s'en occupe", value: 'Personne pour le moment' },
  ]);
  assert.equal(first.body[2]?.text, 'Texte du client');
  assert.equal(
    first.body[3]?.text,
    '\\<\\!here\\> see \\<http://evil\\.example\\|your order\\> or \\[click\\]\\(http://evil\\.example\\) \\*\\*now\\*\\* & \\_x\\_',
    'Markdown shows as typed: no link hidden, nothing formatted',
  );
  assert.deepEqual(first.actions, [
    { type: 'Action.OpenUrl', title: "Ouvrir dans l'app du personnel", url: `${ctx.config.publicBaseUrl}/staff/r/${messageId}` },
  ]);
  assert.equal(last.body[0]?.text, 'Ann est en route : Aide', 'a later status says what changed');
});

test('a chat endpoint is retried after 500s like a signed one, and delivered once the channel answers', async (t) => {
  const ctx = await webhookApp({ t, clock: new ManualClock(new Date()) });
  const { w, displayKey } = await store(ctx, 'en');
  const slack = await Receiver.start(t, 'status500');
  const endpointId = await chatEndpoint(ctx, w, 'slack', slack.url);
  await customerAsks(ctx, displayKey, 'a can of paint');
  await deliverNow(ctx);
  const [pending] = await deliveriesOf(ctx.app, w.token, endpointId);
  assert.deepEqual([pending?.state, pending?.attempts.map((a) => a.status_code)], ['pending', [500]]);
  ctx.clock.advance(30_000);
  await deliverNow(ctx);
  slack.behaviour = 'ok';
  ctx.clock.advance(60_000);
  await deliverNow(ctx);
  const [done] = await deliveriesOf(ctx.app, w.token, endpointId);
  assert.deepEqual([done?.state, done?.attempts.map((a) => a.status_code)], ['delivered', [500, 500, 200]]);
  assert.deepEqual(slackMessageProblems(slack.received.at(-1)?.body), []);
});

test('a chat endpoint at a private address is refused at delivery and at testWebhook unless WEBHOOK_ALLOW_PRIVATE', async (t) => {
  const ctx = await testApp({ t, clock: new ManualClock(new Date()) });
  const { w, displayKey } = await store(ctx, 'en');
  const teams = await Receiver.start(t);
  const endpointId = await chatEndpoint(ctx, w, 'teams', teams.url);
  await customerAsks(ctx, displayKey, 'help');
  await deliverNow(ctx);
  const [refused] = await deliveriesOf(ctx.app, w.token, endpointId);
  assert.equal(refused?.attempts[0]?.status_code, null);
  assert.match(refused?.attempts[0]?.error ?? '', /private address.*WEBHOOK_ALLOW_PRIVATE/);
  const tested = await call(ctx.app, await sessionOf(ctx.app, w.admin), 'POST', `/api/admin/webhooks/${endpointId}/test`);
  assert.deepEqual([tested.json().delivered, tested.json().status_code], [false, null]);
  assert.equal(teams.received.length, 0);

  // Allowed, the test card arrives, valid, pointing at the staff app.
  const allowing = await webhookApp({ t, db: await otherInstanceDb() });
  const ok = await call(allowing.app, await sessionOf(allowing.app, w.admin), 'POST', `/api/admin/webhooks/${endpointId}/test`);
  assert.deepEqual([ok.json().delivered, ok.json().status_code, ok.json().body_excerpt], [true, 200, 'ok']);
  const card = (teams.received[0]?.body as unknown as { attachments: { content: { body: { text?: string }[] } }[] }).attachments[0]?.content;
  assert.deepEqual(adaptiveCardProblems(card), []);
  assert.match(card?.body[0]?.text ?? '', /^Test message from storeops/);
});

test('a slack or teams endpoint takes no secret, and wants https beyond loopback; the file and administration refuse alike', async (t) => {
  const ctx = await webhookApp({ t });
  const w = await adminWorld(ctx.db, ctx.clock);
  const admin = await sessionOf(ctx.app, w.admin);
  const withSecret = await call(ctx.app, admin, 'POST', '/api/admin/webhooks', {
    url: 'https://hooks.slack.com/services/T/B/X',
    format: 'slack',
    secret: 'abc',
  });
  assert.deepEqual([withSecret.statusCode, Object.keys(withSecret.json().errors)], [422, ['secret']]);
  const plain = await call(ctx.app, admin, 'POST', '/api/admin/webhooks', { url: 'http://hooks.example.com/x', format: 'teams' });
  assert.deepEqual([plain.statusCode, plain.json().errors.url], [422, ['a teams webhook URL must be https']]);
  await assert.rejects(
    applyProvisioning(ctx.db, ctx.clock, {
      webhooks: [{ id: freshId(), organization_id: w.organizationId, url: 'http://hooks.example.com/x', format: 'teams' }],
    }),
    /^Error: webhooks\[0\]\.url: a teams webhook URL must be https$/,
  );
  await assert.rejects(
    applyProvisioning(ctx.db, ctx.clock, { webhooks: [{ id: freshId(), organization_id: w.organizationId, url: 'https://example.com/x' }] }),
    /webhooks\[0\]\.secret: is required for a signed endpoint/,
  );
});
