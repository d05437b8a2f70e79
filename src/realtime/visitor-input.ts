/**
 * What the player channel hands to a live conversation (conversation mode only): the visitor's
 * microphone audio, typed turns, mute, and the page's presence (for the `visitor_left` grace).
 */
export interface VisitorInput {
  /**
   * Microphone audio, 16 kHz mono signed 16-bit, as it arrives (any piece size). `lostBefore`: the
   * samples captured just before it that will never come (frames the page's sequence numbers skip,
   * or audio dropped over the rate bound or while muted), so the capture clock moves on by them.
   */
  microphone(pcm: Int16Array, receivedAtMs: number, lostBefore?: number): void;
  /** A turn typed in the page's text box ("type instead"). */
  typed(text: string): void;
  /** The visitor muted (true) or unmuted (false) the microphone. */
  setMuted(muted: boolean): void;
  /** A player page connected to the session (first time or after a drop). */
  pageConnected(): void;
  /** The last connected player page went away. */
  pageDisconnected(): void;
}

/** The live conversation of a session, or null (render mode, unknown or ended session). */
export type VisitorInputs = (sessionId: string) => VisitorInput | null;
