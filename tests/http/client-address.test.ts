// What a per-client limit counts: an IPv4 address, or an IPv6 address's /64 however it is written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientBound } from '../../src/http/client-address.ts';

test('an IPv4 address is its own client, also when written as an IPv4-mapped IPv6 address', () => {
  assert.equal(clientBound('203.0.113.7'), '203.0.113.7');
  assert.equal(clientBound('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(clientBound('::ffff:cb00:7107'), '203.0.113.7');
});

test('every IPv6 address of one /64 is one client, whatever its spelling; another /64 is another', () => {
  const one = clientBound('2001:db8:1:2::1');
  assert.equal(one, '2001:db8:1:2::/64');
  for (const address of ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:0DB8:0001:0002:0:0:0:ffff', '2001:db8:1:2::1.2.3.4', '2001:db8:1:2::9%eth0'])
    assert.equal(clientBound(address), one, address);
  assert.notEqual(clientBound('2001:db8:1:3::1'), one);
  assert.equal(clientBound('::1'), '0:0:0:0::/64');
  assert.equal(clientBound('fe80::1%eth0'), 'fe80:0:0:0::/64');
});

test('what is not an IP address is counted as it is', () => {
  assert.equal(clientBound('unknown'), 'unknown');
});
