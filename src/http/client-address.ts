// The unit a per-client limit counts: an IPv4 address, or an IPv6 address's /64. An IPv6 host picks
// any address of its /64 (privacy addresses rotate on their own), so a limit keyed on the whole
// address would not hold one client back; a /64 is what one network, often one home or store, gets.
import net from 'node:net';

/** The groups of an IPv6 address written out in full (eight numbers), or null when it is not one. */
function ipv6Groups(address: string): number[] | null {
  const bare = address.split('%')[0] ?? ''; // a zone (fe80::1%eth0) is not part of the address
  if (!net.isIPv6(bare)) return null;
  let text = bare;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text); // an embedded IPv4 ends the address
  if (tail !== null) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = rest === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => Number.parseInt(g, 16));
}

/**
 * The client an address stands for in a limit: an IPv4 address itself (also when written as an
 * IPv4-mapped IPv6 address), an IPv6 address's /64 as `a:b:c:d::/64`.
 */
export function clientBound(address: string): string {
  const groups = ipv6Groups(address);
  if (groups === null) return address;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) return [groups[6] ?? 0, groups[7] ?? 0].flatMap((g) => [g >> 8, g & 0xff]).join('.');
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
