// The claimer's name as a customer sees it, in each of the location's staff_name_formats.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { staffNameFor } from '../../src/cfh/rules.ts';
import { testApp } from '../support/world.ts';
import { cfhClient, createRequest, makeCfhWorld } from './support.ts';

test("a first name is what comes before a space, '@', '.', '_' or ',': a login or an address never shows whole", () => {
  const cases: [string, string][] = [
    ['Ann Lee', 'Ann'],
    ['  Ann   Lee ', 'Ann'],
    ['Bob.Smith@corp.example', 'Bob'],
    ['bob_smith', 'bob'],
    ['Smith, Bob', 'Smith'],
    ['carol@store.example', 'carol'],
    ['Zoë', 'Zoë'],
    ['@.,_', 'An associate'],
  ];
  for (const [name, first] of cases) assert.equal(staffNameFor(name, 'first'), first, name);
});

test('the full format shows the name as staff typed it, the generic one no name, and no claimer none', () => {
  assert.equal(staffNameFor('Bob.Smith@corp.example', 'full'), 'Bob.Smith@corp.example');
  assert.equal(staffNameFor('Ann Lee', 'generic'), 'An associate');
  assert.equal(staffNameFor(null, 'first'), null);
});

test('a customer following a request sees neither its device nor its chat channel; staff with a token see both (issue 36, item 6)', async (t) => {
  const ctx = await testApp({ t });
  const w = await makeCfhWorld(ctx.db, ctx.clock);
  const client = cfhClient(ctx.app, w.token);
  const created = await createRequest(client, { location_id: w.locationId, option_id: w.optionId, device_id: 7, chat_channel_id: '19:floor@thread' });
  const status = (headers: Record<string, string>) =>
    ctx.app.inject({ method: 'GET', url: `/api/callforhelp/v1/tracking?message_id=${created.message_id}`, headers });
  const customer = (await status({})).json();
  assert.equal(customer.device_id, null);
  assert.equal(customer.cfh_request.teams_channel_id, null);
  assert.ok(!JSON.stringify(customer).includes('19:floor@thread'));
  const staff = (await status({ authorization: `Bearer ${w.token}` })).json();
  assert.equal(staff.device_id, 7);
  assert.equal(staff.cfh_request.teams_channel_id, '19:floor@thread');
});
