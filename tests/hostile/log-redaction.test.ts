// Secrets sent in odd shapes stay out of the logs of the running service: the secret_token under
// any spelling the query parser accepts, and the credential headers under any case. A customer's
// capability (a request's message_id, a display's key) is logged as a short digest only.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { capabilityDigest, redactUrl } from '../../src/http/secrets.ts';
import { runs } from '../support/contract.ts';

const root = path.resolve(import.meta.dirname, '../..');
const example = path.join(root, 'examples/provision.json');
const LOCATION = 10;
const SECRET = 'the-shared-secret-token-0123456789';
const LOCKER_KEY = 'example-locker-key-change-me-0001';
const API_TOKEN = 'example-api-token-change-me-00001';
const MESSAGE_ID = 'a-customers-message-id-Zq81xKp02';
const DISPLAY_KEY = 'a-displays-key-Hh2mW9cT5rY7';

/** A name spelled as a client may: each character as it is, percent-encoded, or in upper case. */
const spelled = (name: string) =>
  fc
    .array(fc.constantFrom('plain', 'escaped', 'upper'), { minLength: name.length, maxLength: name.length })
    .map((how) =>
      [...name].map((c, i) => (how[i] === 'escaped' ? `%${c.charCodeAt(0).toString(16).padStart(2, '0')}` : how[i] === 'upper' ? c.toUpperCase() : c)).join(''),
    );

test('redactUrl hides the value of a secret parameter however its name is spelled', () => {
  const secret = fc.string({ unit: fc.constantFrom(...'abcXYZ0189-_~.'), minLength: 8, maxLength: 40 });
  const name = fc.constantFrom('secret_token', 'token', 'api_key', 'key').chain(spelled);
  const other = fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  fc.assert(
    fc.property(
      fc.constantFrom('/healthz', '/api/lockers/locations/10', '/a?b'),
      name,
      secret,
      fc.array(other, { maxLength: 3 }),
      fc.nat(3),
      (p, n, s, others, at) => {
        const params = [...others];
        params.splice(Math.min(at, params.length), 0, `${n}=${s}`);
        const url = `${p}${p.includes('?') ? '&' : '?'}${params.join('&')}`;
        const logged = redactUrl(url);
        assert.ok(!logged.includes(`=${s}`), `${url} -> ${logged}`);
        assert.ok(logged.includes(`${n}=[REDACTED]`), `${url} -> ${logged}`);
      },
    ),
    { numRuns: runs(300) },
  );
  assert.equal(redactUrl('/healthz?secret_token=x&next=1&key'), '/healthz?secret_token=[REDACTED]&next=1&key');
  assert.equal(redactUrl('/api/lockers/locations/10'), '/api/lockers/locations/10');
  // Names a lenient parser may still read as the secret (found in review): brackets, a `;`
  // separator, `+` or an escaped space in the name.
  for (const url of [
    '/x?secret_token[]=S3CRET',
    '/x?a=1;secret_token=S3CRET',
    '/x?secret+token=S3CRET',
    '/x?%20secret_token=S3CRET',
    '/x?SECRET-TOKEN=S3CRET',
  ]) {
    assert.ok(!redactUrl(url).includes('S3CRET'), `${url} -> ${redactUrl(url)}`);
  }
});

test("redactUrl shows a customer's capability, in a path or the query, only as a short digest of it", () => {
  const digest = capabilityDigest(MESSAGE_ID);
  assert.match(digest, /^~[0-9a-f]{12}$/);
  assert.equal(redactUrl(`/help/t/${MESSAGE_ID}`), `/help/t/${digest}`);
  assert.equal(redactUrl(`/api/callforhelp/v1/tracking?message_id=${MESSAGE_ID}&a=1`), `/api/callforhelp/v1/tracking?message_id=${digest}&a=1`);
  assert.equal(redactUrl(`/api/callforhelp/stream?Message%5Fid=${MESSAGE_ID}`), `/api/callforhelp/stream?Message%5Fid=${digest}`);
  assert.equal(redactUrl(`/api/callbutton/${MESSAGE_ID}`), `/api/callbutton/${digest}`);
  for (const url of [`/help/${DISPLAY_KEY}`, `/callforhelp/v1/display/CFH.${DISPLAY_KEY}`, `/api/callforhelp/displays/${DISPLAY_KEY}/requests`]) {
    assert.ok(!redactUrl(url).includes(DISPLAY_KEY), `${url} -> ${redactUrl(url)}`);
  }
  for (const url of ['/help-assets/display.js', '/api/callbutton/press', '/api/lockers/locations/10', '/help/t/']) assert.equal(redactUrl(url), url);
});

test('the running service logs no secret, however a client spells or places it', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'storeops-logs-'));
  fs.chmodSync(dataDir, 0o755); // under root, the embedded server's user must pass through
  const child = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      MQTT_PORT: '0',
      LOG_LEVEL: 'trace',
      DATA_DIR: dataDir,
      PROVISION_FILE: example,
      SECRET_TOKEN: SECRET,
      PUBLIC_BASE_URL: 'http://storeops.test',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    let base: string | undefined;
    for (let i = 0; i < 1200 && base === undefined; i++) {
      base = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(logs)?.[1];
      if (child.exitCode !== null) assert.fail(`the service exited: ${logs}`);
      if (base === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(base, `the service started: ${logs}`);
    const listing = `${base}/api/lockers/locations/${LOCATION}`;
    // The query parser decodes names: these spellings are the secret_token itself.
    for (const name of ['secret_token', 'secret%5Ftoken', '%73ecret_token', '%73%65%63%72%65%74%5f%74%6f%6b%65%6e']) {
      const res = await fetch(`${listing}?${name}=${SECRET}`);
      assert.equal(res.status, 200, `${name} is read as secret_token`);
    }
    await fetch(`${listing}?SECRET_TOKEN=${SECRET}&secret_token=${SECRET}`);
    await fetch(`${listing}?a=1&secret_token=${SECRET}&b=2`);
    await fetch(`${base}/api/lockers/cabinet/status`, {
      method: 'POST',
      headers: { 'API-KEY': LOCKER_KEY, 'content-type': 'application/json' },
      body: '{"cabinets":[]}',
    });
    await fetch(`${base}/api/callforhelp/v1/tracking?message_id=x`, { headers: { Authorization: `Bearer ${API_TOKEN}`, Cookie: `session=${API_TOKEN}` } });
    await fetch(`${base}/webhooks/incoming/messaging/store10-radio`, {
      method: 'POST',
      headers: { 'X-Twilio-Signature': `sig-${SECRET}`, 'X-Messaging-Signature': `sig-${SECRET}` },
    });
    await fetch(`${base}/help/t/${MESSAGE_ID}`);
    await fetch(`${base}/help/${DISPLAY_KEY}`);
    await fetch(`${base}/api/callforhelp/v1/tracking?message_id=${MESSAGE_ID}`);
    await fetch(`${base}/api/callforhelp/claim`, {
      method: 'POST',
      headers: { authorization: `bearer ${API_TOKEN}`, 'content-type': 'text/plain' },
      body: API_TOKEN,
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  assert.match(logs, /secret%5Ftoken=\[REDACTED\]/, 'request URLs are logged, with the secret redacted');
  assert.ok(logs.includes(`/help/t/${capabilityDigest(MESSAGE_ID)}`), 'a customer page is logged with the digest of its capability');
  for (const secret of [SECRET, LOCKER_KEY, API_TOKEN, MESSAGE_ID, DISPLAY_KEY]) {
    assert.ok(
      !logs.includes(secret),
      `${secret} appears in no log line:\n${logs
        .split('\n')
        .filter((l) => l.includes(secret))
        .join('\n')
        .slice(0, 2000)}`,
    );
  }
});
