/**
 * Network addresses: the loopback check, and which addresses the service may connect to on a
 * user's behalf (the website reader, webhook deliveries). Loopback, private, link-local (cloud
 * metadata lives there), carrier-grade NAT, multicast and reserved ranges are refused unless the
 * deployment allows private addresses (development and tests). The check runs on the address a
 * connection actually uses: `guardedLookup` resolves the name and refuses a private answer at
 * connect time, so a name that resolves to 127.0.0.1 (or changes its answer between a check and the
 * connection: DNS rebinding) cannot reach this machine's network.
 */
import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';

/** Whether a peer address is this machine (IPv4 127/8, IPv6 ::1, or IPv4-mapped 127/8). */
export function isLoopback(address: string | undefined): boolean {
  return !!address && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));
}

const blocked = new net.BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(address, prefix, 'ipv6');

/** Whether an IP address (v4, v6 or v4-mapped v6) is one the service must not reach. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true; // not an address at all: refuse rather than guess
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return blocked.check(address, 'ipv4');
}

export class PrivateAddressError extends Error {
  readonly code = 'private_address';
  constructor(
    readonly host: string,
    readonly address: string,
    purpose = 'the reader only reads public websites',
  ) {
    super(`${host} resolves to ${address}, a loopback or private-network address; ${purpose}`);
  }
}

/** A `lookup` for http.request: resolves like the system does, refusing private answers. */
export function guardedLookup(allowPrivate: boolean, purpose?: string): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const list = addresses as dns.LookupAddress[];
      if (!allowPrivate) {
        const refused = list.find((a) => isPrivateAddress(a.address));
        if (refused) return callback(new PrivateAddressError(hostname, refused.address, purpose) as NodeJS.ErrnoException, '', 4);
      }
      if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * Whether a URL's host is private: a literal address is checked as it is, a name after resolving
 * it (all its answers). For checks when a URL is saved; connections check again (guardedLookup).
 * A name that does not resolve is not private (it may exist later; the connection decides).
 */
export async function resolvesPrivate(hostname: string): Promise<string | undefined> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return isPrivateAddress(host) ? host : undefined;
  try {
    const answers = await dns.promises.lookup(host, { all: true });
    return answers.find((a) => isPrivateAddress(a.address))?.address;
  } catch {
    return undefined;
  }
}
