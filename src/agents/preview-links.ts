/**
 * Preview links: a short-lived, signed player link that shows an agent's face, studio and voice
 * as saved, without starting a metered session.
 */
import { hmacSha256Hex, safeEqual } from '../core/secrets.js';

export const PREVIEW_TTL_SECONDS = 900;

export class PreviewLinks {
  /** `base` is read at each call, so a changed PUBLIC_URL (tests bind a port late) is honoured. */
  constructor(
    private readonly key: string,
    private readonly base: { publicUrl: string },
  ) {}

  create(agentId: number, now = Date.now()): { preview_url: string; expires_at: string } {
    const expires = Math.floor(now / 1000) + PREVIEW_TTL_SECONDS;
    const body = `${agentId}.${expires}`;
    const token = `${body}.${hmacSha256Hex(this.key, body).slice(0, 32)}`;
    return { preview_url: `${this.base.publicUrl}/preview/${token}`, expires_at: new Date(expires * 1000).toISOString() };
  }

  /** The agent id a valid, unexpired token names, else undefined. */
  verify(token: string, now = Date.now()): number | undefined {
    const match = /^(\d+)\.(\d+)\.([0-9a-f]{32})$/.exec(token);
    if (!match) return undefined;
    const [, agentId, expires, mac] = match;
    if (!safeEqual(mac, hmacSha256Hex(this.key, `${agentId}.${expires}`).slice(0, 32))) return undefined;
    if (Number(expires) * 1000 < now) return undefined;
    return Number(agentId);
  }
}
