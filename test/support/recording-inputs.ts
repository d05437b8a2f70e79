/**
 * A `VisitorInputs` that records what the player channel hands a conversation (microphone audio,
 * typed turns, mute, page presence), for tests of the channel itself.
 */
import type { VisitorInput, VisitorInputs } from '../../src/realtime/visitor-input.js';

export interface Recorded {
  samples: number[];
  pieces: number;
  /** Per piece: the samples lost just before it, as the channel told the conversation. */
  lostBefore: number[];
  typed: string[];
  muted: boolean[];
  connected: number;
  disconnected: number;
}

export class RecordingInputs {
  readonly sessions = new Map<string, Recorded>();
  /** Sessions that have a live conversation (others answer null, as render mode does). */
  readonly live = new Set<string>();

  of(sessionId: string): Recorded {
    let r = this.sessions.get(sessionId);
    if (!r) this.sessions.set(sessionId, (r = { samples: [], pieces: 0, lostBefore: [], typed: [], muted: [], connected: 0, disconnected: 0 }));
    return r;
  }

  readonly hook: VisitorInputs = (sessionId) => {
    if (!this.live.has(sessionId)) return null;
    const r = this.of(sessionId);
    const input: VisitorInput = {
      microphone: (pcm, _receivedAtMs, lostBefore = 0) => {
        r.pieces++;
        r.lostBefore.push(lostBefore);
        for (const s of pcm) r.samples.push(s);
      },
      typed: (text) => r.typed.push(text),
      setMuted: (muted) => r.muted.push(muted),
      pageConnected: () => r.connected++,
      pageDisconnected: () => r.disconnected++,
    };
    return input;
  };
}
