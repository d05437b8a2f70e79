import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CaptionAligner } from '../../src/realtime/captions.js';

test('captions keep the text as written: punctuation, case, quotes, the final period', () => {
  const aligner = new CaptionAligner('Hello, world! We open at 8 a.m. "Come early."');
  assert.equal(aligner.next(['hello', 'world']), 'Hello, world!');
  assert.equal(aligner.next(['we', 'open', 'at', '8', 'a', 'm']), 'We open at 8 a.m.');
  assert.equal(aligner.next(['come', 'early']), '"Come early."');
});

test('words the engine says differently are covered by the next word it finds', () => {
  const aligner = new CaptionAligner('It costs 42 dollars. Thanks!');
  assert.equal(aligner.next(['it', 'costs', 'forty', 'two', 'dollars']), 'It costs 42 dollars.');
  assert.equal(aligner.next(['thanks']), 'Thanks!');
});

test('a piece none of whose words are in the text says what the engine said', () => {
  const aligner = new CaptionAligner('Call 555.');
  assert.equal(aligner.next(['five', 'five', 'five']), 'five five five');
  assert.equal(aligner.next([]), undefined);
});

test('streamed text is aligned as it arrives', () => {
  const aligner = new CaptionAligner();
  aligner.append('Yes, we ');
  aligner.append('deliver. Anything else?');
  assert.equal(aligner.next(['yes', 'we', 'deliver']), 'Yes, we deliver.');
  assert.equal(aligner.next(['anything', 'else']), 'Anything else?');
});
