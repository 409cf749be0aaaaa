// End to end, as the store would see it: R1 and R2 end with the WAV arriving at the edge device
// (a real MQTT client logged in as edge:<edge_id> with its device key), which acks it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import twilio from 'twilio';
import { makeWorld, testApp, type World } from '../support/world.ts';
import { byKey, outboxState, TestDevice, waitUntil } from '../devices/device.ts';
import { assertSpeechWav, toneShare } from './audio.ts';
import { bearer, edgeKey, playText, SENTENCE } from './support.ts';

const ctx = await testApp();
const { app, db, clock, config, devices } = ctx;

async function connectEdge(w: World): Promise<TestDevice> {
  const device = await TestDevice.connect(ctx.mqttUrl, { username: `edge:${w.edgeId}`, password: w.edgeKey });
  assert.equal(await device.subscribe(`radio/${w.edgeId}/play`), 1);
  return device;
}

async function receiveAndAck(device: TestDevice, w: World, messageId: string) {
  await devices.dispatchPending();
  const message = await device.next(byKey(messageId));
  assert.equal(message.topic, `radio/${w.edgeId}/play`);
  assert.equal(message.body.mime, 'audio/wav');
  const wav = assertSpeechWav(Buffer.from(message.body.audio as string, 'base64'));
  await device.publish(`radio/${w.edgeId}/played`, { message_id: messageId });
  await waitUntil(async () => (await outboxState(db, messageId)).acked_at !== null);
  return { body: message.body, wav };
}

test('R1: the edge device receives the spoken text as a WAV over MQTT and acks it', async () => {
  const w = await makeWorld(db, clock, { voiceHandlers: ['normalize', 'chime'] });
  const device = await connectEdge(w);
  try {
    const byKeyRes = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: SENTENCE, actor: 'Store manager' });
    assert.equal(byKeyRes.statusCode, 200, byKeyRes.body);
    const plain = await receiveAndAck(device, w, byKeyRes.json<{ message_id: string }>().message_id);
    assert.equal(plain.body.text, SENTENCE);
    assert.equal(plain.body.actor, 'Store manager');

    const byToken = await playText(app, bearer(w.token), { edgeId: w.edgeId, text: 'Price check: $3.50 at Reg 3', actor: 'chat-bot', process: true });
    assert.equal(byToken.statusCode, 200, byToken.body);
    const processed = await receiveAndAck(device, w, byToken.json<{ message_id: string }>().message_id);
    assert.equal(processed.body.text, 'Price check: 3 dollars 50 at register 3');
    assert.ok(toneShare(processed.wav, 880, 200, 4_000) > 0.6, 'the chime arrives first');
  } finally {
    await device.end();
  }
});

test('R2: an SMS signed by the provider reaches the edge device as a WAV', async () => {
  const w = await makeWorld(db, clock);
  const device = await connectEdge(w);
  try {
    const path = `/webhooks/incoming/messaging/${w.edgeId}`;
    const params = {
      AccountSid: w.accountSid,
      Body: 'Customer waiting at the pharmacy counter, thank you.',
      From: '+15551230000',
      To: '+15559870000',
      NumMedia: '0',
    };
    const res = await app.inject({
      method: 'POST',
      url: path,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(w.authToken, config.publicBaseUrl + path, params),
      },
      payload: new URLSearchParams(params).toString(),
    });
    assert.equal(res.statusCode, 200, res.body);
    const { body } = await receiveAndAck(device, w, res.json<{ message_id: string }>().message_id);
    assert.equal(body.text, params.Body);
    assert.equal(body.actor, '+15551230000');
  } finally {
    await device.end();
  }
});

test('another edge device hears nothing of a play that is not for it', async () => {
  const w = await makeWorld(db, clock);
  const other = await makeWorld(db, clock);
  const mine = await connectEdge(w);
  const theirs = await connectEdge(other);
  try {
    const res = await playText(app, edgeKey(w.edgeKey), { edgeId: w.edgeId, text: SENTENCE, actor: 'x' });
    const id = res.json<{ message_id: string }>().message_id;
    await receiveAndAck(mine, w, id);
    assert.equal(theirs.count(byKey(id)), 0);
  } finally {
    await mine.end();
    await theirs.end();
  }
});
