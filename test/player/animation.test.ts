/**
 * The player's animation and audio logic without a browser: blink statistics, lip sync from a
 * track (and interrupt), ranked morph mixing, and the worklet's ring buffer (resampling continuity,
 * clearing).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Blinker } from '../../src/player/client/blink.js';
import { LipSync } from '../../src/player/client/lipsync.js';
import { MorphMixer } from '../../src/player/client/morphs.js';
import { Expressions } from '../../src/player/client/expression.js';
import type { Mesh } from 'three';

describe('blinks', () => {
  test('about 15-20 a minute, irregular, sometimes double', () => {
    const b = new Blinker();
    const intervals: number[] = [];
    let last = -1;
    let prev = 0;
    for (let t = 0; t < 600; t += 1 / 60) {
      const v = b.update(t);
      if (v > 0.5 && prev <= 0.5) {
        if (last >= 0) intervals.push(t - last);
        last = t;
      }
      prev = v;
    }
    const perMinute = b.count / 10;
    console.log(`${perMinute} blinks a minute`);
    assert.ok(perMinute >= 13 && perMinute <= 22, `${perMinute} blinks a minute`);
    const mean = intervals.reduce((a, c) => a + c, 0) / intervals.length;
    const sd = Math.sqrt(intervals.reduce((a, c) => a + (c - mean) ** 2, 0) / intervals.length);
    assert.ok(sd / mean > 0.3, `irregular (cv ${(sd / mean).toFixed(2)})`);
    assert.ok(
      intervals.some((i) => i < 0.6),
      'double blinks happen',
    );
  });
});

describe('lip sync', () => {
  const track = {
    type: 'track' as const,
    utterance: 1,
    t: 10,
    duration: 1,
    visemes: [
      [10.1, 'PP', 1],
      [10.2, 'aa', 1],
      [10.5, 'O', 1],
      [10.8, 'sil', 1],
    ] as [number, string, number][],
    mouth: { t0: 10, step: 0.1, values: [0, 0.2, 0.9, 1, 0.8, 0.9, 0.6, 0.3, 0, 0] },
  };

  test('jaw and visemes follow the track, closed outside it', () => {
    const lips = new LipSync();
    lips.add(track);
    const layer = new Map<string, number>();
    lips.sample(9.5, layer);
    assert.equal(layer.get('jawOpen') ?? 0, 0);
    lips.sample(10.35, layer);
    assert.ok((layer.get('jawOpen') ?? 0) > 0.4, `jaw ${layer.get('jawOpen')}`);
    lips.sample(10.2, layer);
    assert.ok((layer.get('viseme_aa') ?? 0) > 0.5);
    lips.sample(11.5, layer);
    assert.equal(layer.get('jawOpen') ?? 0, 0);
    assert.equal([...layer.values()].filter((v) => v > 0).length, 0);
  });

  test('interrupt drops the rest of the track at once', () => {
    const lips = new LipSync();
    lips.add(track);
    const layer = new Map<string, number>();
    lips.interrupt(10.3);
    lips.sample(10.35, layer);
    assert.equal(layer.get('jawOpen') ?? 0, 0);
    assert.equal(lips.speaking(10.35), false);
  });
});

describe('morph mixing', () => {
  function fakeMesh(names: string[]): Mesh {
    return { morphTargetDictionary: Object.fromEntries(names.map((n, i) => [n, i])), morphTargetInfluences: names.map(() => 0) } as unknown as Mesh;
  }

  test('blink overrides, speech owns the mouth, smiles carry through', () => {
    const mesh = fakeMesh(['eyeBlinkLeft', 'jawOpen', 'mouthSmileLeft', 'mouthFunnel']);
    const mixer = new MorphMixer();
    mixer.bind([mesh]);
    mixer.layer('idle').set('eyeBlinkLeft', 0.2);
    mixer.layer('blink').set('eyeBlinkLeft', 1);
    mixer.layer('expression').set('mouthSmileLeft', 0.8);
    mixer.layer('expression').set('mouthFunnel', 0.8);
    mixer.layer('speech').set('jawOpen', 0.5);
    mixer.speechAmount = 1;
    for (let k = 0; k < 60; k++) mixer.update(1 / 60);
    assert.equal(mixer.value('eyeBlinkLeft'), 1);
    assert.ok(Math.abs(mixer.value('jawOpen') - 0.5) < 0.01);
    assert.ok(mixer.value('mouthSmileLeft') > 0.55, 'smile mostly kept');
    assert.ok(mixer.value('mouthFunnel') < 0.4, 'other mouth shapes yield to speech');
    assert.equal(mesh.morphTargetInfluences![1], mixer.value('jawOpen'));
  });

  test('after an interrupt the mouth closes within 100 ms', () => {
    const mixer = new MorphMixer();
    mixer.bind([fakeMesh(['jawOpen'])]);
    mixer.layer('speech').set('jawOpen', 0.6);
    mixer.speechAmount = 1;
    for (let k = 0; k < 30; k++) mixer.update(1 / 60);
    mixer.layer('speech').clear();
    let t = 0;
    while (mixer.value('jawOpen') >= 0.05 && t < 1) {
      mixer.update(1 / 60, true);
      t += 1 / 60;
    }
    assert.ok(t <= 0.1, `closed in ${(t * 1000).toFixed(0)} ms`);
  });

  test('expressions blend in and out on the session clock', () => {
    const e = new Expressions();
    const out = new Map<string, number>();
    e.start(5, 'smile', 1, 2);
    e.sample(4.9, out);
    assert.equal(out.size, 0);
    e.sample(5.5, out);
    assert.ok((out.get('mouthSmileLeft') ?? 0) > 0.6);
    e.sample(8, out);
    assert.equal(out.get('mouthSmileLeft') ?? 0, 0);
  });
});

describe('audio worklet ring buffer', () => {
  test('resamples 24 kHz to 48 kHz without gaps across chunks, and clears on interrupt', async () => {
    const g = globalThis as unknown as Record<string, unknown>;
    let registered:
      | (new () => {
          port: { onmessage: (e: { data: unknown }) => void; postMessage: (m: unknown) => void };
          process: (i: unknown, o: Float32Array[][]) => boolean;
        })
      | undefined;
    g.sampleRate = 48000;
    g.currentFrame = 0;
    g.AudioWorkletProcessor = class {
      port = { onmessage: (_e: { data: unknown }) => {}, postMessage: (_m: unknown) => {} };
    };
    g.registerProcessor = (_name: string, ctor: typeof registered) => (registered = ctor);
    await import('../../src/player/client/audio-worklet.js');
    assert.ok(registered);
    const node = new registered!();
    // A 300 Hz sine at 24 kHz, in 20 ms chunks, starting at context time 0.1 s.
    const rate = 24000;
    const chunk = rate * 0.02;
    for (let c = 0; c < 10; c++) {
      const samples = new Float32Array(chunk);
      for (let i = 0; i < chunk; i++) samples[i] = 0.5 * Math.sin((2 * Math.PI * 300 * (c * chunk + i)) / rate);
      node.port.onmessage({ data: { type: 'chunk', start: 0.1 + c * 0.02, rate, samples } });
    }
    const out: number[] = [];
    for (let b = 0; b < 120; b++) {
      const ch = new Float32Array(128);
      node.process([], [[ch]]);
      out.push(...ch);
      g.currentFrame = (g.currentFrame as number) + 128;
    }
    // Silence before 0.1 s, then a clean sine: compare with the ideal signal.
    assert.ok(Math.max(...out.slice(0, 4790).map(Math.abs)) === 0, 'silent before its time');
    let maxErr = 0;
    for (let f = 4810; f < 4800 + 9500; f++) {
      const ideal = 0.5 * Math.sin((2 * Math.PI * 300 * (f - 4800)) / 48000);
      maxErr = Math.max(maxErr, Math.abs(out[f] - ideal));
    }
    assert.ok(maxErr < 0.01, `continuous across chunk boundaries (max error ${maxErr.toFixed(4)})`);
    // Interrupt: clear from now on.
    for (let c = 0; c < 5; c++) node.port.onmessage({ data: { type: 'chunk', start: 0.4 + c * 0.02, rate, samples: new Float32Array(chunk).fill(0.3) } });
    node.port.onmessage({ data: { type: 'clear', from: 0 } });
    const after: number[] = [];
    for (let b = 0; b < 80; b++) {
      const ch = new Float32Array(128);
      node.process([], [[ch]]);
      after.push(...ch);
      g.currentFrame = (g.currentFrame as number) + 128;
    }
    assert.equal(Math.max(...after.map(Math.abs)), 0, 'nothing plays after clear');
  });
});
