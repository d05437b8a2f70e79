/**
 * The pronouncing dictionary, packed into one string and an offset array (src/speech/pronunciations.ts)
 * instead of imported as a 135,000-property object: every word of the package answers the same.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Pronunciations, loadPronunciations } from '../../src/speech/pronunciations.js';

test('the packed dictionary answers every word of the package exactly as the package does', async () => {
  const packed = await loadPronunciations();
  const { dictionary } = (await import('cmu-pronouncing-dictionary')) as { dictionary: Record<string, string> };
  const words = Object.keys(dictionary);
  assert.equal(packed.size, words.length);
  const wrong = words.filter((word) => packed.phones(word) !== dictionary[word]);
  assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} words answer differently`);
});

test('words it lacks, prefixes and extensions of words it has are not found', async () => {
  const packed = await loadPronunciations();
  assert.equal(packed.phones('hello'), 'HH AH0 L OW1');
  for (const absent of ['', 'hel', 'helloo', 'zzzzzz', '\u00e9t\u00e9', 'hello world']) assert.equal(packed.phones(absent), undefined, absent);
});

test('parsing keeps escaped words and sorts lines it was given out of order', () => {
  const packed = Pronunciations.parse('export const dictionary = {\n  "zed": "Z EH1 D",\n  "a\\"b": "EY1 B IY1",\n  "ab": "AE1 B",\n  "a": "AH0"\n}\n');
  assert.equal(packed.size, 4);
  assert.equal(packed.phones('a"b'), 'EY1 B IY1');
  assert.equal(packed.phones('ab'), 'AE1 B');
  assert.equal(packed.phones('a'), 'AH0');
  assert.equal(packed.phones('zed'), 'Z EH1 D');
  assert.equal(packed.phones('b'), undefined);
});
