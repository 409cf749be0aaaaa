// Tenancy and credentials on the radio: every refused credential is 403 (another organization's
// token, another edge device's key, an expired, revoked or unscoped token, another organization's
// messaging account, a signature for another URL), and none of them plays or stores anything;
// R3 and its audio alone tell another organization's valid token 404, as for no edge device
// (contract section 2; tests/tenancy/location-limits.test.ts holds every operation to it).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { before, test } from 'node:test';
import { messagingSignature } from '../../src/radio/signature.ts';
import { makeWorld, provisionToken, testApp, type TestContext, type World } from '../support/world.ts';
import { describe, probeRefusesCleanly, type Probe } from '../support/contract.ts';
import { anotherEdge } from '../radio/support.ts';

let ctx: TestContext;
before(async () => {
  ctx = await testApp();
});

/** A second edge device of the world's organization. */
const siblingEdge = (w: World) => anotherEdge(ctx.db, ctx.clock, w, ['transcript']);

const play = (edgeId: string, headers: Record<string, string>): Probe => ({
  method: 'POST',
  url: '/webhooks/incoming/generic',
  headers: { 'content-type': 'application/json', ...headers },
  payload: JSON.stringify({ edgeId, text: 'Cleanup in aisle 5', actor: 'Mallory', process: true }),
});

const transcripts = (edgeId: string, headers: Record<string, string>): Probe => ({ method: 'GET', url: `/api/radio/edges/${edgeId}/transcripts`, headers });

test("R1 and the transcripts refuse with 403 every credential that is not the edge device's or its organization's radio token (R3 and its audio: 404 to another organization's token), and play nothing", async () => {
  const victim = await makeWorld(ctx.db, ctx.clock, { voiceHandlers: ['transcript'] });
  const intruder = await makeWorld(ctx.db, ctx.clock);
  const sibling = await siblingEdge(victim);
  const expiresAt = new Date(ctx.clock.now().getTime() + 1000);
  const expiring = await provisionToken(ctx.db, ctx.clock, victim.organizationId, ['radio'], { expiresAt });
  const kept = await ctx.app.inject(play(victim.edgeId, { 'api-key': victim.edgeKey }));
  assert.equal(kept.statusCode, 200, kept.body);
  const messageId = kept.json<{ message_id: string }>().message_id;
  ctx.clock.set(expiresAt);
  const refused: [string, Record<string, string>][] = [
    ["another organization's token", { authorization: `Bearer ${intruder.token}` }],
    ["another organization's edge key", { 'api-key': intruder.edgeKey }],
    ["a sibling edge device's key", { 'api-key': sibling.edgeKey }],
    ['an expired token', { authorization: `Bearer ${expiring}` }],
    ['a revoked token', { authorization: `Bearer ${await provisionToken(ctx.db, ctx.clock, victim.organizationId, ['radio'], { revoked: true })}` }],
    ['a token without the radio scope', { authorization: `Bearer ${await provisionToken(ctx.db, ctx.clock, victim.organizationId, ['cfh'])}` }],
    ["the locker's key", { 'api-key': victim.lockerKey }],
    ['the messaging auth token', { 'api-key': victim.authToken }],
    ['a wrong key beside a right token', { 'api-key': 'wrong-key-0123456789', authorization: `Bearer ${victim.token}` }],
    ['no credential', {}],
    ['a malformed Authorization', { authorization: `Basic ${victim.token}` }],
  ];
  for (const [what, headers] of refused) {
    const r3 = [
      { ...transcripts(victim.edgeId, headers), url: `/api/radio/transcripts?edge_id=${encodeURIComponent(victim.edgeId)}` },
      { ...transcripts(victim.edgeId, headers), url: `/api/radio/messages/${messageId}/audio` },
    ];
    for (const probe of [
      play(victim.edgeId, headers),
      transcripts(victim.edgeId, headers),
      { ...transcripts(victim.edgeId, headers), url: `/api/radio/edges/${victim.edgeId}/transcripts/${messageId}/audio` },
      ...r3,
    ]) {
      const res = await probeRefusesCleanly(ctx.app, ctx.db, [victim, intruder], probe);
      const status = r3.includes(probe) && what === "another organization's token" ? 404 : 403;
      assert.equal(res.statusCode, status, `${what}: ${describe(probe)} -> ${res.body}`);
    }
  }
});

test('an unknown edge device is 404 to a valid radio token, and 403 to an edge key, which learns nothing about other devices', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const other = await makeWorld(ctx.db, ctx.clock);
  const byToken = await probeRefusesCleanly(ctx.app, ctx.db, [w], play('no-such-edge-device', { authorization: `Bearer ${w.token}` }));
  assert.equal(byToken.statusCode, 404);
  for (const edgeId of ['no-such-edge-device', other.edgeId]) {
    const byKey = await probeRefusesCleanly(ctx.app, ctx.db, [w, other], play(edgeId, { 'api-key': w.edgeKey }));
    assert.equal(byKey.statusCode, 403, `${edgeId}: ${byKey.body}`);
  }
  const unknown = await ctx.app.inject(play('no-such-edge-device', { 'api-key': w.edgeKey }));
  const known = await ctx.app.inject(play(other.edgeId, { 'api-key': w.edgeKey }));
  assert.equal(known.body, unknown.body, 'an existing edge device of another organization answers as an unknown one');
});

type Fields = Record<string, string>;
const form = (fields: Fields) => new URLSearchParams(fields).toString();

function webhook(edgeId: string, fields: Fields, signature: string | null, header = 'x-messaging-signature'): Probe {
  return {
    method: 'POST',
    url: `/webhooks/incoming/messaging/${edgeId}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(signature === null ? {} : { [header]: signature }) },
    payload: form(fields),
  };
}

test("R2 refuses with 403 another organization's account, an unknown account, a signature for another URL or by another key, and plays nothing", async () => {
  const victim = await makeWorld(ctx.db, ctx.clock);
  const intruder = await makeWorld(ctx.db, ctx.clock);
  const sibling = await siblingEdge(victim);
  const base = ctx.config.publicBaseUrl;
  const url = (edgeId: string) => `${base}/webhooks/incoming/messaging/${edgeId}`;
  const fields = (accountSid: string): Fields => ({ AccountSid: accountSid, Body: 'Aisle 5 please', From: '+15550001111', To: '+15550002222' });
  const mine = fields(victim.accountSid);
  const theirs = fields(intruder.accountSid);
  const unknownSid = `AC${crypto.randomBytes(16).toString('hex')}`;
  const cases: [string, Probe][] = [
    [
      "another organization's account, correctly signed by it",
      webhook(victim.edgeId, theirs, messagingSignature(intruder.authToken, url(victim.edgeId), theirs)),
    ],
    ['an unknown account', webhook(victim.edgeId, fields(unknownSid), messagingSignature(victim.authToken, url(victim.edgeId), fields(unknownSid)))],
    [
      "the right account signed with another organization's token",
      webhook(victim.edgeId, mine, messagingSignature(intruder.authToken, url(victim.edgeId), mine)),
    ],
    ["a signature made for a sibling edge device's URL", webhook(victim.edgeId, mine, messagingSignature(victim.authToken, url(sibling.edgeId), mine))],
    [
      'a signature over other fields',
      webhook(victim.edgeId, { ...mine, Body: 'Open the safe' }, messagingSignature(victim.authToken, url(victim.edgeId), mine)),
    ],
    [
      'a signature for another base URL',
      webhook(victim.edgeId, mine, messagingSignature(victim.authToken, `https://evil.example${'/webhooks/incoming/messaging/'}${victim.edgeId}`, mine)),
    ],
    ['no signature', webhook(victim.edgeId, mine, null)],
    ['an empty signature', webhook(victim.edgeId, mine, '')],
    ['the auth token itself as the signature', webhook(victim.edgeId, mine, victim.authToken)],
  ];
  for (const [what, probe] of cases) {
    const res = await probeRefusesCleanly(ctx.app, ctx.db, [victim, intruder], probe);
    assert.equal(res.statusCode, 403, `${what}: ${describe(probe)} -> ${res.body}`);
  }
  // The same request, signed right, is played: the refusals above were about the credential alone.
  const right = await ctx.app.inject(webhook(victim.edgeId, mine, messagingSignature(victim.authToken, url(victim.edgeId), mine), 'x-twilio-signature'));
  assert.equal(right.statusCode, 200, right.body);
});

test('R2 to an unknown edge device is 404 only once the signature is right; a bad signature is 403 whether the edge exists or not', async () => {
  const w = await makeWorld(ctx.db, ctx.clock);
  const fields: Fields = { AccountSid: w.accountSid, Body: 'Aisle 5', From: '+15550001111', To: '+15550002222' };
  const path = (edgeId: string) => `${ctx.config.publicBaseUrl}/webhooks/incoming/messaging/${edgeId}`;
  const signedUnknown = await probeRefusesCleanly(
    ctx.app,
    ctx.db,
    [w],
    webhook('no-such-edge', fields, messagingSignature(w.authToken, path('no-such-edge'), fields)),
  );
  assert.equal(signedUnknown.statusCode, 404);
  const badUnknown = await ctx.app.inject(webhook('no-such-edge', fields, 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='));
  const badKnown = await ctx.app.inject(webhook(w.edgeId, fields, 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='));
  assert.equal(badUnknown.statusCode, 403);
  assert.equal(badKnown.body, badUnknown.body);
});
