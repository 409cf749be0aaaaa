// What single sign-on decides before asking any provider: where the browser may be sent back to
// (`safeReturnTo`: a path of this service, nothing a browser reads as another origin) and which
// issuers the relying party accepts (https, or http on this host only).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLoopbackHost, safeReturnTo } from '../../src/people/oidc-rules.ts';
import { createOidcClient } from '../../src/people/oidc.ts';

test('a return_to that is a path of this service is kept, percent-encoded as a Location header needs', () => {
  for (const path of [
    '/',
    '/console',
    '/console/queue?location=12&view=all#top',
    '/staff/',
    '/%2F%2Fevil.com',
    '/console/%5Cevil',
    '/javascript:alert(1)',
    '/a:b@c',
  ]) {
    assert.equal(safeReturnTo(path), path, path);
  }
  assert.equal(safeReturnTo('/console/équipe'), '/console/%C3%A9quipe');
  assert.equal(safeReturnTo('/a b'), '/a%20b');
  assert.equal(safeReturnTo('/console/../staff'), '/staff', 'dot segments resolved on this origin');
});

test('a return_to a browser could read as another origin, or not a path at all, becomes /console', () => {
  const hostile = [
    '//evil.com',
    '///evil.com',
    '/\\evil.com',
    '/\\/evil.com',
    '\\\\evil.com',
    'https://evil.com',
    'http:/evil.com',
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'evil.com',
    'console',
    '',
    ' /console',
    '/\t/evil.com',
    '/\n/evil.com',
    '/\r\nSet-Cookie: a=b',
    '/console\u0000',
    '/\u200e/evil.com',
    '/\u2028/evil.com',
    '/..//evil.com',
    '/./\\evil.com',
    '/console\\..\\..\\evil',
    `/${'a'.repeat(600)}`,
  ];
  for (const value of hostile) assert.equal(safeReturnTo(value), '/console', JSON.stringify(value));
  for (const value of [undefined, null, 42, ['/console/queue'], { path: '/' }]) assert.equal(safeReturnTo(value), '/console', String(value));
});

test('an https issuer, or an http one on a loopback address, is accepted without asking the provider', () => {
  for (const issuer of [
    'https://id.example.com',
    'https://login.example.com/tenant/v2.0',
    'http://127.0.0.1:8080',
    'http://127.10.0.3',
    'http://localhost:9000/realms/store',
    'http://[::1]:4000',
  ]) {
    const rp = createOidcClient({
      issuer,
      clientId: 'storeops',
      clientSecret: 'secret',
      redirectUri: 'https://ops.example.com/auth/oidc/callback',
      rolesClaim: 'groups',
    });
    assert.equal(rp.issuer, new URL(issuer).href);
  }
});

test('an http issuer off this host, or not a URL, is refused when the relying party is made, saying why', () => {
  const make = (issuer: string) => () =>
    createOidcClient({ issuer, clientId: 'storeops', clientSecret: 'secret', redirectUri: 'https://ops.example.com/auth/oidc/callback', rolesClaim: 'groups' });
  for (const issuer of [
    'http://id.example.com',
    'http://10.0.0.5:8080',
    'http://128.0.0.1',
    'http://[::2]',
    'http://localhost.evil.com',
    'http://127.0.0.1.evil.com',
  ]) {
    assert.throws(make(issuer), /http only on a loopback address/, issuer);
  }
  assert.throws(make('ftp://127.0.0.1'), /must be an https URL/);
  assert.throws(make('id.example.com'), /not a URL/);
  assert.throws(make('https://id.example.com/?tenant=1'), /no query, fragment or credentials/);
  assert.throws(make('https://user:pass@id.example.com'), /no query, fragment or credentials/);
});

test('loopback is 127.0.0.0/8, ::1 and localhost, however the URL spells them', () => {
  for (const host of [
    '127.0.0.1',
    '127.255.255.254',
    'localhost',
    '[::1]',
    new URL('http://127.1').hostname,
    new URL('http://0x7f000001').hostname,
    new URL('http://[0:0:0:0:0:0:0:1]').hostname,
    new URL('http://[::ffff:127.0.0.1]').hostname,
  ]) {
    assert.ok(isLoopbackHost(host), host);
  }
  for (const host of ['10.0.0.1', '0.0.0.0', '[::]', '[::ffff:10.0.0.1]', 'example.com', 'localhost.example.com', '169.254.169.254'])
    assert.ok(!isLoopbackHost(host), host);
});
