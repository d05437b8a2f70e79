/** Faces beyond the catalogue: the dials and the seed decide the person, the same way every time. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lookFor } from '../../src/faces/generate.js';
import { hexToRgb } from '../../src/faces/image.js';

const base = { seed: 11, gender: 'f' as const, age: 30, build: 0, skinTone: 0.3 };
const lum = (hex: string) => hexToRgb(hex).reduce((a, b) => a + b, 0) / 3;

test('the same seed and dials give the same face; another seed another person', () => {
  assert.deepEqual(lookFor(base), lookFor(base));
  const other = lookFor({ ...base, seed: 12 });
  const diff = lookFor(base).identity!.reduce((s, w, i) => s + Math.abs(w - other.identity![i]), 0);
  assert.ok(diff > 3, `identities differ by ${diff.toFixed(2)} σ in total`);
});

test('the dials do what they say: skin tone, age (lines and greying), build, gender', () => {
  assert.ok(lum(lookFor({ ...base, skinTone: 0 }).skin) > lum(lookFor({ ...base, skinTone: 1 }).skin) + 0.3);
  const young = lookFor({ ...base, age: 22 });
  const old = lookFor({ ...base, age: 70 });
  assert.ok(old.age! > young.age! + 0.8);
  assert.ok(lum(old.hair) > lum(young.hair) || lum(young.hair) > 0.5, 'hair greys with age');
  // build moves the face-width mode (6) and size (0)
  const slim = lookFor({ ...base, build: -1 }).identity!;
  const broad = lookFor({ ...base, build: 1 }).identity!;
  assert.ok(broad[6] < slim[6] - 1 && broad[0] < slim[0]);
  const man = lookFor({ ...base, gender: 'm' }).identity!;
  const woman = lookFor(base).identity!;
  assert.ok(man[0] < woman[0] && man[4] > woman[4], 'men larger, with heavier brow and chin');
  assert.equal(lookFor({ ...base, gender: 'f' }).beard, null);
});
