/**
 * The compact container the ICT FaceKit data is committed in (see README.md beside this file):
 * `u32 json length | JSON header | zero padding to 4 bytes | sections…`, the whole file brotli
 * compressed. The header lists each section's name, type, offset (from the first section) and
 * length, plus whatever metadata the writer adds. Shared by the extraction script (writer) and the
 * face builder (reader), so the two cannot drift apart.
 */
import zlib from 'node:zlib';

export type SectionType = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'f32';
export interface SectionInfo {
  name: string;
  type: SectionType;
  offset: number;
  length: number;
}
type Typed = Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Float32Array;

const CTORS = { u8: Uint8Array, i8: Int8Array, u16: Uint16Array, i16: Int16Array, u32: Uint32Array, f32: Float32Array } as const;

function typeOf(a: Typed): SectionType {
  if (a instanceof Uint8Array) return 'u8';
  if (a instanceof Int8Array) return 'i8';
  if (a instanceof Uint16Array) return 'u16';
  if (a instanceof Int16Array) return 'i16';
  if (a instanceof Uint32Array) return 'u32';
  return 'f32';
}

export function writeContainer(meta: Record<string, unknown>, sections: Record<string, Typed>): Buffer {
  const infos: SectionInfo[] = [];
  const chunks: Buffer[] = [];
  let offset = 0;
  for (const [name, arr] of Object.entries(sections)) {
    const bytes = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
    infos.push({ name, type: typeOf(arr), offset, length: arr.length });
    chunks.push(bytes);
    const pad = (4 - (bytes.length % 4)) % 4;
    if (pad) chunks.push(Buffer.alloc(pad));
    offset += bytes.length + pad;
  }
  let json = Buffer.from(JSON.stringify({ ...meta, sections: infos }));
  json = Buffer.concat([json, Buffer.alloc((4 - (json.length % 4)) % 4, 0x20)]);
  const head = Buffer.alloc(4);
  head.writeUInt32LE(json.length);
  const raw = Buffer.concat([head, json, ...chunks]);
  return zlib.brotliCompressSync(raw, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_LGWIN]: 24, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
  });
}

export interface Container<M> {
  meta: M;
  get<T extends Typed>(name: string): T;
}

export function readContainer<M>(compressed: Uint8Array): Container<M> {
  const raw = zlib.brotliDecompressSync(compressed);
  const jsonLen = raw.readUInt32LE(0);
  const meta = JSON.parse(raw.subarray(4, 4 + jsonLen).toString('utf8')) as M & { sections: SectionInfo[] };
  const base = 4 + jsonLen;
  // Copy into an aligned buffer so typed views can be made at any section offset.
  const body = new Uint8Array(raw.length - base);
  body.set(raw.subarray(base));
  const byName = new Map(meta.sections.map((s) => [s.name, s]));
  return {
    meta,
    get<T extends Typed>(name: string): T {
      const s = byName.get(name);
      if (!s) throw new Error(`face data: no section ${name}`);
      const C = CTORS[s.type];
      return new C(body.buffer, s.offset, s.length) as unknown as T;
    },
  };
}
