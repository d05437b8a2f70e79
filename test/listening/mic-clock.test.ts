/**
 * The microphone's own clock (mic-clock.ts): audio is dated by when it was captured, whatever
 * bursts it arrived in, follows a page whose sound clock runs slower than the server's, and starts
 * over after a gap in the stream.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MicClock } from '../../src/conversation/listening/mic-clock.js';

const FRAME = 320; // the page's 20 ms frames

test('frames that arrive late in a burst are dated by when they were captured', () => {
  const clock = new MicClock();
  const dates: number[] = [];
  for (let k = 0; k < 100; k++) {
    const captured = 1000 + (k + 1) * 20;
    // Frames 10 to 19 wait on a busy server and arrive together, up to 200 ms late.
    const arrived = k >= 10 && k < 20 ? 1000 + 21 * 20 + 2 : captured + 2 + (k % 3);
    dates.push(clock.date(FRAME, arrived));
  }
  for (let k = 10; k < 100; k++) assert.ok(Math.abs(dates[k] - (1000 + (k + 1) * 20 + 2)) < 1e-6, `frame ${k} dated ${dates[k]}`);
});

test('follows a page whose sound clock runs slow (100 parts per million) instead of adding it up', () => {
  const clock = new MicClock();
  let worst = 0;
  // Ten minutes of 20 ms frames, each captured 20.002 ms of server time after the one before.
  for (let k = 0; k < 30_000; k++) {
    const captured = 5000 + (k + 1) * 20.002;
    const arrived = captured + 3 + (k % 7 === 0 ? 40 : 0);
    const dated = clock.date(FRAME, arrived);
    if (k > 1000) worst = Math.max(worst, Math.abs(dated - (captured + 3)));
  }
  // A fixed anchor would be 60 ms behind by the end; the window keeps it within its own span's drift.
  assert.ok(worst < 2, `dated up to ${worst.toFixed(2)} ms away from the capture`);
});

test('starts over after a gap in the stream', () => {
  const clock = new MicClock();
  for (let k = 0; k < 50; k++) clock.date(FRAME, 1000 + (k + 1) * 20);
  // The page stopped sending for 3 s (the microphone was off), then goes on.
  const after = clock.date(FRAME, 1000 + 51 * 20 + 3000);
  assert.equal(after, 1000 + 51 * 20 + 3000);
});

test('audio captured but never delivered is counted in: what follows is dated as captured', () => {
  const lost = 10; // 200 ms of frames the server dropped (or the page numbered and never sent)
  const run = (tell: boolean) => {
    const clock = new MicClock();
    const dates: number[] = [];
    for (let k = 0; k < 200; k++) {
      if (k >= 50 && k < 50 + lost) continue;
      const captured = 1000 + (k + 1) * 20;
      dates.push(clock.date(FRAME, captured + 2, tell && k === 50 + lost ? lost * FRAME : 0) - (captured + 2));
    }
    return dates.slice(50);
  };
  // Told, every frame after the loss is dated when it was captured.
  for (const error of run(true)) assert.ok(Math.abs(error) < 1e-6, `dated ${error} ms off`);
  // Not told, they were dated 200 ms early (the window still held the anchor from before the loss).
  assert.ok(run(false).every((error) => Math.abs(error + lost * 20) < 1e-6));
});
