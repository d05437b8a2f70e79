/** Whether a peer address is this machine (IPv4 127/8, IPv6 ::1, or IPv4-mapped 127/8). */
export function isLoopback(address: string | undefined): boolean {
  return !!address && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));
}
