/** PCM helpers: format conversion, WAV in and out, and simple measures used by tests and the bench. */

export function floatToInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]));
    out[i] = s < 0 ? Math.round(s * 32768) : Math.round(s * 32767);
  }
  return out;
}

export function int16ToFloat(samples: Int16Array): Float32Array {
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = samples[i] / 32768;
  return out;
}

/** Little-endian s16 bytes (as providers send them) to samples; an odd trailing byte is returned for the next call. */
export function bytesToInt16(bytes: Uint8Array): Int16Array {
  const even = bytes.length - (bytes.length % 2);
  const out = new Int16Array(even / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, even);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

export function concatInt16(parts: Int16Array[]): Int16Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Int16Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** A mono 16-bit PCM WAV file. */
export function encodeWav(pcm: Int16Array, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  const dataBytes = pcm.length * 2;
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  const body = Buffer.from(pcm.buffer, pcm.byteOffset, dataBytes);
  return Buffer.concat([header, body]);
}

export interface DecodedWav {
  pcm: Int16Array;
  sampleRate: number;
  channels: number;
}

/**
 * Reads a PCM WAV (16-bit integer or 32-bit float), mixing down to mono. Walks the chunks, so
 * LIST/fact chunks before `data` are skipped; a `data` size of 0 or 0xFFFFFFFF (streamed) means
 * "to the end".
 */
export function decodeWav(buffer: Uint8Array): DecodedWav {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const tag = (at: number) => String.fromCharCode(buffer[at], buffer[at + 1], buffer[at + 2], buffer[at + 3]);
  if (buffer.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  let offset = 12;
  let format = 1;
  let channels = 1;
  let sampleRate = 0;
  let bits = 16;
  while (offset + 8 <= buffer.length) {
    const id = tag(offset);
    let size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      format = view.getUint16(body, true);
      channels = view.getUint16(body + 2, true);
      sampleRate = view.getUint32(body + 4, true);
      bits = view.getUint16(body + 14, true);
      if (format === 0xfffe) format = view.getUint16(body + 24, true);
    } else if (id === 'data') {
      if (size === 0 || size === 0xffffffff || body + size > buffer.length) size = buffer.length - body;
      const frames = Math.floor(size / (bits / 8) / channels);
      const pcm = new Int16Array(frames);
      for (let f = 0; f < frames; f++) {
        let sum = 0;
        for (let c = 0; c < channels; c++) {
          const at = body + (f * channels + c) * (bits / 8);
          if (format === 3 && bits === 32) sum += Math.max(-1, Math.min(1, view.getFloat32(at, true))) * 32767;
          else if (bits === 16) sum += view.getInt16(at, true);
          else if (bits === 8) sum += (buffer[at] - 128) * 256;
          else throw new Error(`unsupported WAV sample format ${format}/${bits}`);
        }
        pcm[f] = Math.round(sum / channels);
      }
      return { pcm, sampleRate, channels };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('WAV has no data chunk');
}

/** A sample at or within 1 % of full scale (on a ±1 scale) was clipped. */
export const CLIPPED_LEVEL = 0.99;

/** Root-mean-square level in [0, 1]. */
export function rms(pcm: Int16Array): number {
  if (pcm.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += (pcm[i] / 32768) ** 2;
  return Math.sqrt(sum / pcm.length);
}

/** Zero crossings per second. */
export function zeroCrossingRate(pcm: Int16Array, sampleRate: number): number {
  let crossings = 0;
  for (let i = 1; i < pcm.length; i++) if (pcm[i - 1] < 0 !== pcm[i] < 0) crossings++;
  return pcm.length ? (crossings * sampleRate) / pcm.length : 0;
}
