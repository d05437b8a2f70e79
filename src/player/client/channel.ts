/**
 * The player channel socket: connects, parses text (JSON) and binary (audio) frames, and
 * reconnects by itself with jittered exponential backoff when the socket drops, until the session
 * ends or the link turns out to be invalid.
 */
import { parseAudioFrame, type AudioFrame, type PlayerMessage } from './protocol.js';

export interface ChannelHandlers {
  message(msg: PlayerMessage): void;
  audio(frame: AudioFrame): void;
  open(): void;
  /** The socket dropped; `retryIn` seconds until the next attempt (null: no retry). */
  drop(retryIn: number | null): void;
  /** The link is not (or no longer) valid. */
  invalid(): void;
}

/** Close codes a server may use to say "do not retry" (see docs/player.md). */
export const CLOSE_INVALID = [4004, 4404];
export const CLOSE_ENDED = 4410;

export class Channel {
  private ws: WebSocket | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  connects = 0;

  constructor(
    private readonly url: string,
    private readonly pageUrl: string,
    private readonly on: ChannelHandlers,
  ) {}

  connect(): void {
    if (this.stopped) return;
    this.timer = null;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this.retry();
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      this.connects++;
      this.on.open();
    };
    ws.onmessage = (e) => {
      if (typeof e.data === 'string') {
        let msg: PlayerMessage;
        try {
          msg = JSON.parse(e.data);
        } catch {
          return;
        }
        if (msg && typeof msg.type === 'string') {
          if (msg.type === 'hello') this.attempt = 0;
          if (msg.type === 'ended') this.stopped = true;
          this.on.message(msg);
        }
      } else if (e.data instanceof ArrayBuffer) {
        const frame = parseAudioFrame(e.data);
        if (!frame) return;
        // The frame's track (packed in front of its samples) is handled first, as if sent before it.
        if (frame.track && typeof frame.track.type === 'string') this.on.message(frame.track);
        this.on.audio(frame);
      }
    };
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (CLOSE_INVALID.includes(e.code)) {
        this.stopped = true;
        this.on.invalid();
        return;
      }
      if (e.code === CLOSE_ENDED) {
        this.stopped = true;
        this.on.message({ type: 'ended', reason: e.reason || 'ended' });
        return;
      }
      this.retry();
    };
    ws.onerror = () => {
      /* onclose follows */
    };
  }

  private retry(): void {
    if (this.stopped || this.timer) return;
    const delay = Math.min(8, 0.4 * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
    this.attempt++;
    this.on.drop(delay);
    // After a few failures, ask the page URL whether the link is still valid.
    if (this.attempt >= 3) {
      fetch(this.pageUrl, { method: 'HEAD', cache: 'no-store' }).then(
        (r) => {
          if (r.status === 404 || r.status === 410) {
            this.stop();
            this.on.invalid();
          }
        },
        () => {},
      );
    }
    this.timer = setTimeout(() => this.connect(), delay * 1000);
  }

  send(msg: object): void {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  /** Sends a binary frame (microphone audio); false when the socket is not open (the frame is dropped). */
  sendBinary(data: ArrayBuffer): boolean {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    // A socket that cannot keep up (over ~1 s of audio queued) drops frames rather than lag behind.
    if (this.ws.bufferedAmount > 64 * 1024) return false;
    this.ws.send(data);
    return true;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.ws?.close();
    this.ws = null;
  }
}
