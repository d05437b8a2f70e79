/**
 * LiveAvatar session tokens: JWTs (HS256, signed with a secret the deployment keeps in its
 * database) that HeyGen's web SDK decodes to learn the session's mode. The payload carries
 * `session_id` and `start_session_data`; the signature is checked here with `jose` (the SDK never
 * checks it). A token has no `exp`: its start window and single use are kept in the database, and
 * it stays good for keep-alive and stop as long as its session.
 */
import { jwtVerify, SignJWT } from 'jose';

export interface StartSessionData {
  mode: 'LITE';
  avatar_id: string;
  max_session_duration?: number;
}

export interface TokenClaims {
  session_id: string;
  start_session_data: StartSessionData;
}

const ISSUER = 'presence';
/** A JWT's three base64url parts; anything else is not a session token. */
const JWT_SHAPE = /^[A-Za-z0-9_-]{10,2000}\.[A-Za-z0-9_-]{10,4000}\.[A-Za-z0-9_-]{20,200}$/;

export class SessionTokens {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  static looksLikeToken(value: string): boolean {
    return JWT_SHAPE.test(value);
  }

  mint(claims: TokenClaims): Promise<string> {
    return new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer(ISSUER).setIssuedAt().sign(this.key);
  }

  /** The claims of a token this deployment signed, or undefined for anything else. */
  async verify(token: string): Promise<TokenClaims | undefined> {
    if (!SessionTokens.looksLikeToken(token)) return undefined;
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER });
      const sessionId = payload.session_id;
      const data = payload.start_session_data as StartSessionData | undefined;
      if (typeof sessionId !== 'string' || !data || data.mode !== 'LITE') return undefined;
      return { session_id: sessionId, start_session_data: data };
    } catch {
      return undefined;
    }
  }
}
