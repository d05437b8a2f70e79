/** Pitch at the end of what the visitor said: YIN on synthetic tones, and on real recorded speech. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pitchHz, PitchTrack } from '../../src/conversation/listening/pitch.js';
import { cards, jfk, librivox, speechSpan, testdataInstalled } from '../recognition/recordings.js';

const FRAME = 512;

/** A voiced-like tone: the fundamental and two harmonics, gliding from `fromHz` to `toHz` over the frames. */
function glide(fromHz: number, toHz: number, frames: number, amplitude = 8000): Int16Array[] {
  const out: Int16Array[] = [];
  let phase = 0;
  for (let f = 0; f < frames; f++) {
    const frame = new Int16Array(FRAME);
    for (let i = 0; i < FRAME; i++) {
      const hz = fromHz + ((toHz - fromHz) * (f * FRAME + i)) / (frames * FRAME);
      phase += (2 * Math.PI * hz) / 16000;
      frame[i] = Math.round(amplitude * (Math.sin(phase) + 0.5 * Math.sin(2 * phase) + 0.3 * Math.sin(3 * phase)) * 0.6);
    }
    out.push(frame);
  }
  return out;
}

function judge(frames: Int16Array[]) {
  const track = new PitchTrack();
  for (const f of frames) track.push(f);
  return track.end();
}

test('YIN finds the fundamental of tones from 80 to 380 Hz, harmonics and all', () => {
  for (const hz of [80, 110, 150, 220, 300, 380]) {
    const [frame] = glide(hz, hz, 1);
    const found = pitchHz(frame);
    assert.ok(Math.abs(found - hz) / hz < 0.03, `${hz} Hz found as ${found}`);
    // Float frames (−1..1) as the VAD sees them give the same answer.
    assert.ok(Math.abs(pitchHz(Float32Array.from(frame, (s) => s / 32768)) - found) < 0.5);
  }
});

test('silence, a whisper of a tone and white noise have no pitch', () => {
  assert.equal(pitchHz(new Int16Array(FRAME)), 0);
  assert.equal(pitchHz(glide(150, 150, 1, 100)[0]), 0, 'too quiet to judge');
  let seed = 7;
  const noise = Int16Array.from({ length: FRAME }, () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return (seed / 2 ** 31 - 0.5) * 16000;
  });
  assert.equal(pitchHz(noise), 0);
});

test('a falling end, a rising end, a level voice, and too little to tell', () => {
  // A turn at ~140 Hz whose last 250 ms fall to 100 Hz: a statement said to its end.
  assert.equal(judge([...glide(140, 140, 30), ...glide(140, 100, 8)]), 'falling');
  // The same voice rising to 190 Hz at the end: a question, or "and…" with more to come.
  assert.equal(judge([...glide(140, 140, 30), ...glide(140, 190, 8)]), 'rising');
  // Held level: a speaker who stopped mid-thought.
  assert.equal(judge(glide(140, 140, 38)), 'level');
  assert.equal(judge([...glide(140, 140, 30), ...glide(140, 145, 8)]), 'level');
  // Both cues are needed: a voice that stepped down and held there low, or one that fell within the
  // top of its range, is not a final fall.
  assert.equal(judge([...glide(180, 180, 30), ...glide(120, 120, 8)]), 'level');
  assert.equal(judge([...glide(120, 120, 30), ...glide(200, 170, 8)]), 'level');
  assert.equal(judge(glide(140, 100, 3)), 'unknown', 'three pitched frames are too few');
  assert.equal(judge([new Int16Array(FRAME), new Int16Array(FRAME)]), 'unknown', 'silence is not pitch');
});

test('reset forgets the turn', () => {
  const track = new PitchTrack();
  for (const f of [...glide(140, 140, 20), ...glide(140, 100, 8)]) track.push(f);
  assert.equal(track.end(), 'falling');
  track.reset();
  assert.equal(track.frames, 0);
  assert.equal(track.end(), 'unknown');
});

test('on real speech: a plausible voice range, and how real sentences end', { skip: !testdataInstalled() && 'pocketsphinx-testdata is not installed' }, () => {
  const track = (pcm: Int16Array) => {
    const t = new PitchTrack();
    const hz: number[] = [];
    const { startMs, endMs } = speechSpan(pcm);
    for (let i = startMs * 16; i + FRAME <= endMs * 16; i += FRAME) {
      const f = t.push(pcm.subarray(i, i + FRAME));
      if (f) hz.push(f);
    }
    return { end: t.end(), median: hz.sort((a, b) => a - b)[hz.length >> 1], pitched: hz.length };
  };
  // The LibriVox reader is a man: his median pitch lies in a man's range.
  for (const clip of librivox()) {
    const { median, pitched } = track(clip.pcm);
    assert.ok(median > 70 && median < 180, `${clip.name}: median ${median} Hz`);
    assert.ok(pitched > 20, `${clip.name}: ${pitched} pitched frames`);
  }
  // Card names read as finished items end falling ("…seven of clubs."), as heard.
  const byName = new Map(cards().map((c) => [c.name, c]));
  for (const name of ['cards-002', 'cards-003', 'cards-005']) assert.equal(track(byName.get(name)!.pcm).end, 'falling', name);
  // "…made amiable himself" mid-paragraph: the reader holds his voice up for the next sentence.
  const midParagraph = librivox().find((c) => c.name.endsWith('0880'))!;
  assert.notEqual(track(midParagraph.pcm).end, 'falling');
  const speech = jfk();
  if (speech) assert.equal(track(speech.pcm).end, 'falling', 'jfk: "…for your country."');
});
