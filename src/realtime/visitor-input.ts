/**
 * What the player channel hands to a live conversation (conversation mode only): the visitor's
 * microphone audio, typed turns, mute, and the page's presence (for the `visitor_left` grace).
 */
export interface VisitorInput {
  /** Microphone audio, 16 kHz mono signed 16-bit, as it arrives (any piece size). */
  microphone(pcm: Int16Array, receivedAtMs: number): void;
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
