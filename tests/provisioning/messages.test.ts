// What an operator is told about a broken provisioning file: enough to fix it in one go.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { applyProvisioning, parseProvisioning, ProvisioningError } from '../../src/provisioning/apply.ts';
import { describeSummary, nearestName } from '../../src/provisioning/errors.ts';
import { freshId, testDb } from '../support/world.ts';

const clock = new ManualClock();
const key = 'locker-key-abcdefghijklmnop';

function refusal(input: unknown): string {
  try {
    parseProvisioning(input);
  } catch (err) {
    assert.ok(err instanceof ProvisioningError);
    return err.message;
  }
  return assert.fail('the file was accepted');
}

test('a value outside its enum lists the allowed values once', () => {
  const message = refusal({ lockers: [{ id: 1, location_id: 1, name: 'x', api_key: key, cabinets: [{ id: 1, key: 1, thermal_mode: 'warm' }] }] });
  assert.equal(message, 'lockers[0].cabinets[0].thermal_mode: must be one of ambient, heat, freeze, chill');
  const scopes = refusal({ api_tokens: [{ name: 'n', organization_id: 1, scopes: ['cfh', 'radios'], token: key }] });
  assert.match(scopes, /^api_tokens\[0\]\.scopes\[1\]: must be one of cfh, radio, /);
  assert.equal(scopes.split('must be').length, 2, 'said once, not once per allowed value');
});

test('an unknown key at any level is refused with its path and the nearest known name', () => {
  assert.equal(refusal({ locker: [] }), 'locker: is not a known key; did you mean "lockers"?');
  assert.equal(
    refusal({ lockers: [{ id: 1, location_id: 1, name: 'x', api_key: key, cabinet: [] }] }),
    'lockers[0].cabinet: is not a known key; did you mean "cabinets"?',
  );
  assert.equal(
    refusal({ lockers: [{ id: 1, location_id: 1, name: 'x', api_key: key, cabinets: [{ id: 1, key: 1, thermal: 'heat' }] }] }),
    'lockers[0].cabinets[0].thermal: is not a known key; did you mean "thermal_mode"?',
  );
  assert.match(refusal({ organizations: [{ id: 1, name: 'x', colour: 'red' }] }), /^organizations\[0\]\.colour: is not a known key \(known: id, name\)$/);
});

test('a nullable number of the wrong type says what it may be', () => {
  assert.equal(
    refusal({ locations: [{ id: 1, organization_id: 1, name: 'x', cfh_timeout_seconds: 'ten' }] }),
    'locations[0].cfh_timeout_seconds: must be an integer or null',
  );
});

test('a reference to a missing organization or location is named in words with the path of the entry', async () => {
  const db = await testDb();
  const [org, loc] = [freshId(), freshId()];
  await assert.rejects(
    applyProvisioning(db, clock, { locations: [{ id: loc, organization_id: org, name: 'Store' }] }),
    (err: Error) => err.message === `locations[0].organization_id: organization ${org} does not exist (it is neither in this file nor already provisioned)`,
  );
  await assert.rejects(
    applyProvisioning(db, clock, { lockers: [{ id: freshId(), location_id: loc, name: 'Front', api_key: key }] }),
    (err: Error) => err.message === `lockers[0].location_id: location ${loc} does not exist (it is neither in this file nor already provisioned)`,
  );
  await assert.rejects(
    applyProvisioning(db, clock, { cfh_options: [{ id: freshId(), organization_id: org, text_en: 'Help', text_fr: 'Aide', prompt_en: '', prompt_fr: '' }] }),
    (err: Error) => err.message.startsWith(`cfh_options[0].organization_id: organization ${org} does not exist`),
  );
});

test('the summary of what a file applied counts each kind it had', () => {
  assert.equal(
    describeSummary({ organizations: 1, locations: 2, lockers: 1, cabinets: 4, cfh_options: 0 }),
    'organizations 1, locations 2, lockers 1, cabinets 4',
  );
  assert.equal(describeSummary({ organizations: 0 }), 'nothing');
  assert.equal(nearestName('api_token', ['api_tokens', 'webhooks']), 'api_tokens');
  assert.equal(nearestName('zzzz', ['api_tokens', 'webhooks']), null);
});
