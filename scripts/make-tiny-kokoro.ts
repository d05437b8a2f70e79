/**
 * Writes a tiny stand-in for Kokoro-82M with exactly Kokoro's ONNX interface, so the real loading,
 * tokenising, inference and streaming code runs in tests without the 80-300 MB weights.
 *
 *   inputs : input_ids int64 [1, sequence_length], style float32 [1, 256], speed float32 [1]
 *   output : waveform float32 [1, samples]   (24 kHz)
 *
 * Each token becomes 75 ms of a Hann-windowed tone whose pitch is set by the token id (times
 * speed) and whose loudness is the mean |style| row that kokoro-js picked for the text length:
 * tests can check that the ids, the style row and the speed all reach the graph. Alongside it go
 * config.json, tokenizer.json (Kokoro's own phoneme vocabulary) and tokenizer_config.json, laid
 * out as onnx-community/Kokoro-82M-v1.0-ONNX is.
 *
 * The ONNX protobuf is written directly (no Python or onnx package needed).
 *
 * Usage: node --import tsx scripts/make-tiny-kokoro.ts [out-dir]   (default .cache/tiny-kokoro)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const TINY_SAMPLES_PER_TOKEN = 1800;
const RATE = 24000;

// Kokoro v1.0's phoneme vocabulary (config.json "vocab" of hexgrad/Kokoro-82M); id 0 is the "$" pad.
export const KOKORO_VOCAB: Record<string, number> = {
  $: 0,
  ';': 1,
  ':': 2,
  ',': 3,
  '.': 4,
  '!': 5,
  '?': 6,
  '—': 9,
  '…': 10,
  '"': 11,
  '(': 12,
  ')': 13,
  '“': 14,
  '”': 15,
  ' ': 16,
  '\u0303': 17,
  ʣ: 18,
  ʥ: 19,
  ʦ: 20,
  ʨ: 21,
  ᵝ: 22,
  '\uAB67': 23,
  A: 24,
  I: 25,
  O: 31,
  Q: 33,
  S: 35,
  T: 36,
  W: 39,
  Y: 41,
  ᵊ: 42,
  a: 43,
  b: 44,
  c: 45,
  d: 46,
  e: 47,
  f: 48,
  h: 50,
  i: 51,
  j: 52,
  k: 53,
  l: 54,
  m: 55,
  n: 56,
  o: 57,
  p: 58,
  q: 59,
  r: 60,
  s: 61,
  t: 62,
  u: 63,
  v: 64,
  w: 65,
  x: 66,
  y: 67,
  z: 68,
  ɑ: 69,
  ɐ: 70,
  ɒ: 71,
  æ: 72,
  β: 75,
  ɔ: 76,
  ɕ: 77,
  ç: 78,
  ɖ: 80,
  ð: 81,
  ʤ: 82,
  ə: 83,
  ɚ: 85,
  ɛ: 86,
  ɜ: 87,
  ɟ: 90,
  ɡ: 92,
  ɥ: 99,
  ɨ: 101,
  ɪ: 102,
  ʝ: 103,
  ɯ: 110,
  ɰ: 111,
  ŋ: 112,
  ɳ: 113,
  ɲ: 114,
  ɴ: 115,
  ø: 116,
  ɸ: 118,
  θ: 119,
  œ: 120,
  ɹ: 123,
  ɾ: 125,
  ɻ: 126,
  ʁ: 128,
  ɽ: 129,
  ʂ: 130,
  ʃ: 131,
  ʈ: 132,
  ʧ: 133,
  ʊ: 135,
  ʋ: 136,
  ʌ: 138,
  ɣ: 139,
  ɤ: 140,
  χ: 142,
  ʎ: 143,
  ʒ: 147,
  ʔ: 148,
  ˈ: 156,
  ˌ: 157,
  ː: 158,
  ʰ: 162,
  ʲ: 164,
  '↓': 169,
  '→': 171,
  '↗': 172,
  '↘': 173,
  ᵻ: 177,
};
const VOCAB_SIZE = 178;

/** Tone of a token id, in Hz at speed 1: 140..680 Hz, a typical voice range. */
export function tinyTokenHz(id: number): number {
  return 140 + ((id * 37) % 28) * 20;
}

// ---- minimal protobuf writer --------------------------------------------------------------
type Field = Buffer;
function varint(n: number | bigint): Buffer {
  let v = BigInt.asUintN(64, BigInt(n));
  const bytes: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    bytes.push(b);
  } while (v);
  return Buffer.from(bytes);
}
const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, n: number | bigint): Field => Buffer.concat([key(field, 0), varint(n)]);
const bytes = (field: number, data: Buffer): Field => Buffer.concat([key(field, 2), varint(data.length), data]);
const str = (field: number, s: string): Field => bytes(field, Buffer.from(s, 'utf8'));
const msg = (field: number, ...parts: Field[]): Field => bytes(field, Buffer.concat(parts));

const FLOAT = 1;
const INT64 = 7;

function tensor(field: number, name: string, dataType: number, dims: number[], raw: Buffer): Field {
  return msg(field, ...dims.map((d) => int(1, d)), int(2, dataType), str(8, name), bytes(9, raw));
}
function floats(values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeFloatLE(v, i * 4));
  return b;
}
function int64s(values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => b.writeBigInt64LE(BigInt(v), i * 8));
  return b;
}
function valueInfo(field: number, name: string, elemType: number, dims: Array<number | string>): Field {
  const dimParts = dims.map((d) => msg(1, typeof d === 'number' ? int(1, d) : str(2, d)));
  return msg(field, str(1, name), msg(2, msg(1, int(1, elemType), msg(2, ...dimParts))));
}
function node(op: string, inputs: string[], outputs: string[], name: string, attrs: Field[] = []): Field {
  return msg(1, ...inputs.map((i) => str(1, i)), ...outputs.map((o) => str(2, o)), str(3, name), str(4, op), ...attrs);
}
const attrInt = (name: string, v: number) => msg(5, str(1, name), int(3, v), int(20, 2));
const attrInts = (name: string, v: number[]) => msg(5, str(1, name), ...v.map((x) => int(8, x)), int(20, 7));

export function tinyKokoroOnnx(): Buffer {
  const H = TINY_SAMPLES_PER_TOKEN;
  const step = Array.from({ length: VOCAB_SIZE }, (_, id) => (2 * Math.PI * tinyTokenHz(id)) / RATE);
  const t = Array.from({ length: H }, (_, i) => i);
  const hann = Array.from({ length: H }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (H - 1)));
  const graph = Buffer.concat([
    node('Gather', ['step_table', 'input_ids'], ['step'], 'gather', [attrInt('axis', 0)]), // [1,N,1]
    node('Mul', ['step', 'speed'], ['step_speed'], 'speed_pitch'),
    node('Mul', ['step_speed', 't'], ['phase'], 'phase'), // [1,N,H]
    node('Sin', ['phase'], ['tone'], 'sin'),
    node('Mul', ['tone', 'hann'], ['shaped'], 'window'),
    node('Abs', ['style'], ['style_abs'], 'abs'),
    node('ReduceMean', ['style_abs'], ['loudness'], 'loudness', [attrInts('axes', [0, 1]), attrInt('keepdims', 0)]),
    node('Mul', ['loudness', 'gain'], ['amp'], 'gain'),
    node('Mul', ['shaped', 'amp'], ['voiced'], 'amp'),
    node('Reshape', ['voiced', 'out_shape'], ['waveform'], 'flatten'),
    str(2, 'tiny-kokoro'),
    tensor(5, 'step_table', FLOAT, [VOCAB_SIZE, 1], floats(step)),
    tensor(5, 't', FLOAT, [H], floats(t)),
    tensor(5, 'hann', FLOAT, [H], floats(hann)),
    tensor(5, 'gain', FLOAT, [], floats([3])),
    tensor(5, 'out_shape', INT64, [2], int64s([1, -1])),
    valueInfo(11, 'input_ids', INT64, [1, 'sequence_length']),
    valueInfo(11, 'style', FLOAT, [1, 256]),
    valueInfo(11, 'speed', FLOAT, [1]),
    valueInfo(12, 'waveform', FLOAT, [1, 'num_samples']),
  ]);
  return Buffer.concat([
    int(1, 8), // ir_version
    str(2, 'presence-tiny-kokoro'),
    bytes(7, graph),
    msg(8, str(1, ''), int(2, 13)), // opset_import: default domain, opset 13
  ]);
}

export function tinyTokenizerJson(): object {
  const allowed = Object.keys(KOKORO_VOCAB)
    .filter((k) => k !== '$')
    .map((c) => c.replace(/[\\\]^-]/g, '\\$&'))
    .join('');
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ id: 0, content: '$', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: { type: 'Replace', pattern: { Regex: `[^${allowed}]` }, content: '' },
    pre_tokenizer: { type: 'Split', pattern: { Regex: '' }, behavior: 'Isolated', invert: false },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '$', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '$', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { $: { id: '$', ids: [0], tokens: ['$'] } },
    },
    decoder: null,
    model: { type: 'WordLevel', vocab: KOKORO_VOCAB, unk_token: '$' },
  };
}

/** Writes the model folder; returns its path. Idempotent. */
export function makeTinyKokoro(dir: string): string {
  fs.mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'onnx', 'model.onnx'), tinyKokoroOnnx());
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_type: 'style_text_to_speech_2' }, null, 2));
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  fs.writeFileSync(
    path.join(dir, 'tokenizer_config.json'),
    JSON.stringify({ model_max_length: 512, pad_token: '$', tokenizer_class: 'PreTrainedTokenizer', unk_token: '$' }),
  );
  return dir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = path.resolve(process.argv[2] ?? '.cache/tiny-kokoro');
  makeTinyKokoro(out);
  console.log(`tiny Kokoro model written to ${out}`);
}
