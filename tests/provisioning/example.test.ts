// The sample store (examples/provision.json) is what a newcomer sees, hears and copies first: it
// must read as a store a person recognises and work as the README starts it (default settings).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { testConfig } from '../support/world.ts';
import { parseProvisioning } from '../../src/provisioning/apply.ts';
import { isPrivateAddress } from '../../src/webhooks/rules.ts';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => parseProvisioning(JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')));
const sample = read('examples/provision.json');

test("no option's prompt tells the radio that someone is already coming", () => {
  // The radio says "Customer needs help: <where>. <prompt>": the prompt of a plain help request
  // must not claim that help is on its way before anyone took it.
  const coming = (sample.cfh_options ?? [])
    .flatMap((o) => [o.prompt_en, o.prompt_fr])
    .filter((p) => /\bcoming\b|\barrive|on (the|their) way|en route/i.test(p ?? ''));
  assert.deepEqual(coming, []);
});

test('no device is named with letters the radio spells out (a display named "Entrance QR" is read "Q R")', () => {
  const names = [...(sample.cfh_displays ?? []), ...(sample.call_buttons ?? []), ...(sample.radio_edges ?? [])].map((d) => d.name);
  assert.deepEqual(
    names.filter((n) => /\b[A-Z]{2,3}\b/.test(n)),
    [],
  );
});

test("the sample's webhooks are delivered with the default settings (no loopback or private target)", () => {
  assert.equal(testConfig().webhookAllowPrivate, false, 'the default refuses private targets');
  const refused = (sample.webhooks ?? [])
    .map((w) => new URL(w.url).hostname.replace(/^\[|\]$/g, ''))
    .filter((host) => host === 'localhost' || host.endsWith('.localhost') || isPrivateAddress(host));
  assert.deepEqual(refused, []);
});

test('the webhook example the README points at is a valid file for a receiver on this machine', () => {
  const hooks = read('examples/webhook.json');
  assert.equal(hooks.webhooks?.length, 1);
  assert.match(
    fs.readFileSync(path.join(root, 'README.md'), 'utf8'),
    /WEBHOOK_ALLOW_PRIVATE=true[^\n]*npm start[\s\S]{0,400}examples\/webhook\.json|examples\/webhook\.json[\s\S]{0,400}WEBHOOK_ALLOW_PRIVATE=true/,
  );
});
