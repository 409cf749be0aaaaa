// The messaging signature against the provider's published example and its library.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import twilio from 'twilio';
import { isValidMessagingSignature, messagingSignature, signedContent } from '../../src/radio/signature.ts';

// The example of the provider's documentation on validating requests (auth token 12345).
const DOCS = {
  authToken: '12345',
  url: 'https://mycompany.com/myapp.php?foo=1&bar=2',
  params: { CallSid: 'CA1234567890ABCDE', Caller: '+14158675309', Digits: '1234', From: '+14158675309', To: '+18005551212' },
  signature: 'RSOYDt4T1cUTdK1PDd93/VVr8B8=',
};

test("the provider's published example: same signed text, same signature", () => {
  assert.equal(
    signedContent(DOCS.url, DOCS.params),
    'https://mycompany.com/myapp.php?foo=1&bar=2CallSidCA1234567890ABCDECaller+14158675309Digits1234From+14158675309To+18005551212',
  );
  assert.equal(messagingSignature(DOCS.authToken, DOCS.url, DOCS.params), DOCS.signature);
  assert.equal(isValidMessagingSignature(DOCS.authToken, DOCS.url, DOCS.params, DOCS.signature), true);
});

test('the published example refuses any change of token, URL, name or value', () => {
  const valid = (authToken: string, url: string, params: Record<string, string>) => isValidMessagingSignature(authToken, url, params, DOCS.signature);
  assert.equal(valid('12346', DOCS.url, DOCS.params), false);
  assert.equal(valid(DOCS.authToken, DOCS.url.replace('foo=1', 'foo=2'), DOCS.params), false);
  assert.equal(valid(DOCS.authToken, DOCS.url.replace('https', 'http'), DOCS.params), false);
  assert.equal(valid(DOCS.authToken, DOCS.url, { ...DOCS.params, Digits: '1235' }), false);
  const { Digits, ...withoutDigits } = DOCS.params;
  assert.equal(valid(DOCS.authToken, DOCS.url, { ...withoutDigits, digits: Digits }), false);
  assert.equal(valid(DOCS.authToken, DOCS.url, { ...DOCS.params, Extra: '' }), false);
});

test('fields sort by name in code-unit order (capitals first), values of a repeated field sorted', () => {
  assert.equal(signedContent('u', { b: '2', a: '1', B: '3' }), 'uB3a1b2');
  assert.equal(signedContent('u', { m: ['z', 'a', 'k'] }), 'umamkmz');
});

test("signatures of the provider's library are accepted, repeated and duplicate values included", () => {
  const url = 'https://storeops.example/webhooks/incoming/messaging/store10-radio?x=1';
  const cases: Record<string, string | string[]>[] = [
    { AccountSid: `AC${'0'.repeat(32)}`, Body: 'Hello', From: '+1', To: '+2' },
    { Body: 'ünïcödé ✓ & <tags>', MediaUrl: ['b', 'a'], Empty: '' },
    { Tag: ['same', 'same', 'other'] },
  ];
  for (const params of cases) {
    const signature = twilio.getExpectedTwilioSignature('auth-token-0123456789', url, params);
    assert.equal(isValidMessagingSignature('auth-token-0123456789', url, params, signature), true, JSON.stringify(params));
    assert.equal(isValidMessagingSignature('auth-token-0123456789', `${url}&y=2`, params, signature), false);
  }
});

test("the contract's own reading of repeated values (each value, duplicates too) is accepted", () => {
  const url = 'https://storeops.example/hook';
  const params = { Tag: ['same', 'same'] };
  const contract = messagingSignature('token-token-token-token', url, params);
  assert.notEqual(contract, twilio.getExpectedTwilioSignature('token-token-token-token', url, params));
  assert.equal(isValidMessagingSignature('token-token-token-token', url, params, contract), true);
});
