/**
 * The visitor's microphone (conversation mode): getUserMedia with the browser's echo cancellation,
 * noise suppression and automatic gain, an AudioWorklet that resamples to 16 kHz
 * (mic-worklet.ts), and 20 ms frames sent over the player channel with a sequence number
 * (docs/player-protocol.md, "Microphone frames"). Muting disables the track and stops sending.
 */
export type MicState = 'not-asked' | 'asking' | 'granted' | 'denied' | 'unavailable';

/** Bytes in front of each frame's samples: uint32 LE sequence number. */
export const MIC_HEADER_BYTES = 4;

export class Microphone {
  state: MicState = 'not-asked';
  muted = false;
  /** Frames handed to the socket, and frames dropped (socket down or backed up). */
  framesSent = 0;
  framesDropped = 0;
  /** RMS of the last chunk (0..1), for the listening indication. */
  level = 0;
  onChange: () => void = () => {};
  private stream: MediaStream | null = null;
  private node: AudioWorkletNode | null = null;
  private seq = 0;

  constructor(
    private readonly ctx: AudioContext | null,
    private readonly workletReady: () => Promise<void>,
    private readonly send: (frame: ArrayBuffer) => boolean,
  ) {}

  /** Asks for the microphone and starts streaming (once). */
  async start(): Promise<MicState> {
    if (this.state !== 'not-asked') return this.state;
    if (!navigator.mediaDevices?.getUserMedia || !this.ctx?.audioWorklet) {
      this.set('unavailable');
      return this.state;
    }
    this.set('asking');
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
      });
    } catch (error) {
      const name = (error as { name?: string })?.name;
      this.set(name === 'NotFoundError' || name === 'NotReadableError' ? 'unavailable' : 'denied');
      return this.state;
    }
    try {
      await this.workletReady();
      const source = this.ctx.createMediaStreamSource(this.stream);
      const node = new AudioWorkletNode(this.ctx, 'presence-mic-capture', {
        numberOfInputs: 1,
        numberOfOutputs: 1,
        outputChannelCount: [1],
        channelCount: 1,
        channelCountMode: 'explicit',
      });
      node.port.onmessage = (e: MessageEvent) => {
        if (e.data?.type === 'mic') this.chunk(e.data.samples as Int16Array, e.data.level as number);
      };
      source.connect(node);
      // The node outputs silence; connected so the graph pulls it on every browser.
      node.connect(this.ctx.destination);
      this.node = node;
      for (const track of this.stream.getAudioTracks()) track.enabled = !this.muted;
      this.set('granted');
    } catch (error) {
      console.error('microphone capture failed', error);
      this.stream.getTracks().forEach((t) => t.stop());
      this.set('unavailable');
    }
    return this.state;
  }

  private chunk(samples: Int16Array, level: number): void {
    this.level = this.muted ? 0 : level;
    if (this.muted) return;
    const frame = new ArrayBuffer(MIC_HEADER_BYTES + samples.byteLength);
    new DataView(frame).setUint32(0, this.seq++ >>> 0, true);
    new Int16Array(frame, MIC_HEADER_BYTES).set(samples);
    if (this.send(frame)) this.framesSent++;
    else this.framesDropped++;
  }

  setMuted(muted: boolean): void {
    this.muted = muted;
    for (const track of this.stream?.getAudioTracks() ?? []) track.enabled = !muted;
    if (muted) this.level = 0;
    this.onChange();
  }

  stop(): void {
    this.stream?.getTracks().forEach((t) => t.stop());
    this.node?.disconnect();
    this.node = null;
  }

  private set(state: MicState): void {
    this.state = state;
    this.onChange();
  }
}
