/**
 * The face's still picture: a small software rasteriser over the GLB (no browser, no GPU; a user's
 * server has neither), so the player page can show the person from its first frame while the live
 * head loads. Z-buffered triangles, Lambert shading with the stage's key, fill and sky lights, the
 * material's base colour, texture and vertex colours, alpha-tested and blended layers, 2×2
 * supersampling, ACES tone mapping and sRGB like the page's renderer; the camera is the page's
 * default (`mid`) shot framed from the same measurements as client/scene.ts and client/camera.ts.
 * The picture is a transparent PNG plus where it sits in the page's view (`StillPlacement`).
 */
import zlib from 'node:zlib';
import { Logger, NodeIO, type Document, type Material, type Primitive, type Texture } from '@gltf-transform/core';
import { ALL_EXTENSIONS } from '@gltf-transform/extensions';
import jpeg from 'jpeg-js';
import { MeshoptDecoder } from 'meshoptimizer';

/**
 * Where the still sits in the page: it covers [x0, x1] × [y0, y1] of the reference camera's image
 * plane (tangent units, y up, the shot's target at 0,0). The page scales it by
 * `k = max(100vh·a, min(100vh·b, 100vw·c))` pixels per tangent unit, which follows the camera
 * rig's rule (landscape frames keep the framed height; narrow ones widen to the head's width; the
 * bust's bottom caps it).
 */
export interface StillPlacement {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  a: number;
  b: number;
  c: number;
}

export interface Still {
  png: Uint8Array;
  width: number;
  height: number;
  placement: StillPlacement;
  /** Milliseconds spent (parse, raster, encode). */
  ms: number;
}

export interface StillOptions {
  /** The face's skin colour (catalogue look), for the page's exposure compensation. */
  skin?: string;
  /** Pixels for the framed height (the page's view at the reference shot); default 400. */
  frameHeight?: number;
}

// The page's stage (client/scene.ts, client/camera.ts): keep in step.
const FOV = 26;
const MID = { height: 2.05, eyes: 0.38, width: 1.9 };
const EXPOSURE = 0.88;
const LIGHTS: { dir: [number, number, number]; color: number; intensity: number }[] = [
  { dir: [-1.4, 1.7, 1.5], color: 0xfff1e2, intensity: 2.8 },
  { dir: [1.7, -0.1, 1.3], color: 0xd8e2ff, intensity: 0.55 },
  { dir: [1.2, 1.5, -1.5], color: 0xfff4ea, intensity: 3.2 },
];
const HEMI = { sky: 0xeef2ff, ground: 0x2e2824, intensity: 0.32 };
/** The standard material's specular and the environment's share, which Lambert leaves out. */
const AMBIENT_LIFT = 0.06;

const srgbToLinear = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
const linearToSrgb = (c: number) => (c <= 0.0031308 ? c * 12.92 : 1.055 * c ** (1 / 2.4) - 0.055);
const hexRgb = (n: number): [number, number, number] => [
  srgbToLinear(((n >> 16) & 255) / 255),
  srgbToLinear(((n >> 8) & 255) / 255),
  srgbToLinear((n & 255) / 255),
];
const SRGB_TO_LINEAR = Float32Array.from({ length: 256 }, (_, i) => srgbToLinear(i / 255));

const acesFit = (v: number) => (v * (v + 0.0245786) - 0.000090537) / (v * (0.983729 * v + 0.432951) + 0.238081);

/** three.js's ACESFilmicToneMapping (the RRT and ODT fit), per channel after its input matrix. */
function aces(r: number, g: number, b: number, out: Float32Array): void {
  r *= 1 / 0.6;
  g *= 1 / 0.6;
  b *= 1 / 0.6;
  const ir = 0.59719 * r + 0.35458 * g + 0.04823 * b;
  const ig = 0.076 * r + 0.90834 * g + 0.01566 * b;
  const ib = 0.0284 * r + 0.13383 * g + 0.83777 * b;
  const fr = acesFit(ir);
  const fg = acesFit(ig);
  const fb = acesFit(ib);
  out[0] = Math.min(1, Math.max(0, 1.60475 * fr - 0.53108 * fg - 0.07367 * fb));
  out[1] = Math.min(1, Math.max(0, -0.10208 * fr + 1.10813 * fg - 0.00605 * fb));
  out[2] = Math.min(1, Math.max(0, -0.00327 * fr - 0.07276 * fg + 1.07602 * fb));
}

/** The page's exposure for a skin tone (client/scene.ts setSkinTone). */
function exposureFor(skin: string | undefined): number {
  const m = typeof skin === 'string' ? /^#?([0-9a-f]{6})$/i.exec(skin.trim()) : null;
  if (!m) return EXPOSURE;
  const n = parseInt(m[1], 16);
  const [r, g, b] = hexRgb(n);
  const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return EXPOSURE * Math.min(1.45, Math.max(0.9, (0.42 / Math.max(lum, 0.01)) ** 0.3));
}

// ---- images: textures in (JPEG via jpeg-js, PNG via node:zlib), the still out (PNG)

interface Image {
  width: number;
  height: number;
  data: Uint8Array;
}

export function decodePng(bytes: Uint8Array): Image | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let off = 8;
  let width = 0;
  let height = 0;
  let depth = 0;
  let type = 0;
  let interlace = 0;
  let palette: Uint8Array | null = null;
  let trns: Uint8Array | null = null;
  const idat: Uint8Array[] = [];
  while (off + 8 <= bytes.length) {
    const len = view.getUint32(off);
    const kind = String.fromCharCode(...bytes.subarray(off + 4, off + 8));
    const body = bytes.subarray(off + 8, off + 8 + len);
    if (kind === 'IHDR') {
      width = view.getUint32(off + 8);
      height = view.getUint32(off + 12);
      depth = body[8];
      type = body[9];
      interlace = body[12];
    } else if (kind === 'PLTE') palette = body;
    else if (kind === 'tRNS') trns = body;
    else if (kind === 'IDAT') idat.push(body);
    else if (kind === 'IEND') break;
    off += 12 + len;
  }
  const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[type];
  if (depth !== 8 || interlace !== 0 || !channels || !width || !height) return null;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const px = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[row + x - channels] : 0;
      const b = y > 0 ? px[row - stride + x] : 0;
      const c = x >= channels && y > 0 ? px[row - stride + x - channels] : 0;
      let v = raw[src + x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[row + x] = v & 255;
    }
  }
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const o = i * 4;
    if (type === 6) data.set(px.subarray(i * 4, i * 4 + 4), o);
    else if (type === 2) (data[o] = px[i * 3]), (data[o + 1] = px[i * 3 + 1]), (data[o + 2] = px[i * 3 + 2]), (data[o + 3] = 255);
    else if (type === 4) (data[o] = data[o + 1] = data[o + 2] = px[i * 2]), (data[o + 3] = px[i * 2 + 1]);
    else if (type === 0) (data[o] = data[o + 1] = data[o + 2] = px[i]), (data[o + 3] = 255);
    else if (type === 3 && palette) {
      const k = px[i];
      data[o] = palette[k * 3];
      data[o + 1] = palette[k * 3 + 1];
      data[o + 2] = palette[k * 3 + 2];
      data[o + 3] = trns && k < trns.length ? trns[k] : 255;
    }
  }
  return { width, height, data };
}

function decodeImage(bytes: Uint8Array, mime: string): Image | null {
  try {
    if (mime === 'image/png' || (bytes[0] === 0x89 && bytes[1] === 0x50)) return decodePng(bytes);
    if (mime === 'image/jpeg' || (bytes[0] === 0xff && bytes[1] === 0xd8)) {
      const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 256 });
      return { width: img.width, height: img.height, data: img.data };
    }
  } catch {
    /* an image we cannot read: the material's colour alone */
  }
  return null;
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(zlib.crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** RGBA PNG, each row with the filter that leaves the smallest residuals (the usual heuristic). */
export function encodeRgbaPng(rgba: Uint8Array, width: number, height: number): Uint8Array {
  const stride = width * 4;
  const raw = new Uint8Array((stride + 1) * height);
  const trial = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    let best = Infinity;
    for (let f = 0; f < 5; f++) {
      let sum = 0;
      for (let x = 0; x < stride; x++) {
        const a = x >= 4 ? rgba[row + x - 4] : 0;
        const b = y > 0 ? rgba[row - stride + x] : 0;
        const c = x >= 4 && y > 0 ? rgba[row - stride + x - 4] : 0;
        let pred = 0;
        if (f === 1) pred = a;
        else if (f === 2) pred = b;
        else if (f === 3) pred = (a + b) >> 1;
        else if (f === 4) {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        }
        const v = (rgba[row + x] - pred) & 255;
        trial[x] = v;
        sum += v < 128 ? v : 256 - v;
      }
      if (sum < best) {
        best = sum;
        raw[y * (stride + 1)] = f;
        raw.set(trial, y * (stride + 1) + 1);
      }
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', ihdr),
      pngChunk('IDAT', zlib.deflateSync(raw, { level: 7, memLevel: 9 })),
      pngChunk('IEND', new Uint8Array(0)),
    ]),
  );
}

// ---- the scene: world-space triangles with what shading needs

interface Part {
  /** World positions, normals (may be empty: flat), UVs (may be empty), colours (may be empty). */
  pos: Float32Array;
  nrm: Float32Array;
  uv: Float32Array;
  col: Float32Array;
  index: Uint32Array;
  color: [number, number, number, number];
  texture: Image | null;
  mode: 'OPAQUE' | 'MASK' | 'BLEND';
  cutoff: number;
  doubleSided: boolean;
}

const io = () =>
  new NodeIO().setLogger(new Logger(Logger.Verbosity.SILENT)).registerExtensions(ALL_EXTENSIONS).registerDependencies({ 'meshopt.decoder': MeshoptDecoder });

/** An attribute as floats, `size` per element (normalised integers mapped to [-1, 1] or [0, 1]). */
function read(accessor: ReturnType<Primitive['getAttribute']>, size: number): Float32Array {
  if (!accessor) return new Float32Array(0);
  const n = accessor.getCount();
  const es = accessor.getElementSize();
  const array = accessor.getArray() as ArrayLike<number> | null;
  if (!array) return new Float32Array(0);
  const type = accessor.getComponentType();
  const div = !accessor.getNormalized() ? 1 : type === 5120 ? 127 : type === 5121 ? 255 : type === 5122 ? 32767 : type === 5123 ? 65535 : 1;
  const signed = type === 5120 || type === 5122;
  const out = new Float32Array(n * size);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < size; k++) {
      if (k >= es) {
        out[i * size + k] = k === 3 ? 1 : 0;
        continue;
      }
      const v = array[i * es + k] / div;
      out[i * size + k] = signed && v < -1 ? -1 : v;
    }
  }
  return out;
}

/** Per-axis minimum and maximum of packed xyz triples. */
function bounds(xyz: Float32Array): { min: number[]; max: number[] } {
  let x0 = Infinity,
    y0 = Infinity,
    z0 = Infinity,
    x1 = -Infinity,
    y1 = -Infinity,
    z1 = -Infinity;
  for (let i = 0; i < xyz.length; i += 3) {
    const x = xyz[i],
      y = xyz[i + 1],
      z = xyz[i + 2];
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
    if (z < z0) z0 = z;
    if (z > z1) z1 = z;
  }
  return { min: [x0, y0, z0], max: [x1, y1, z1] };
}

const mul4 = (m: ArrayLike<number>, x: number, y: number, z: number, w: number): [number, number, number] => [
  m[0] * x + m[4] * y + m[8] * z + m[12] * w,
  m[1] * x + m[5] * y + m[9] * z + m[13] * w,
  m[2] * x + m[6] * y + m[10] * z + m[14] * w,
];

interface Scene {
  parts: Part[];
  box: { min: number[]; max: number[] };
  eyes: [number, number, number] | null;
  bodyTop: number;
}

async function sceneOf(doc: Document): Promise<Scene> {
  const textures = new Map<Texture, Image | null>();
  const parts: Part[] = [];
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  const grow = (p: number[]) => p.forEach((v, k) => ((min[k] = Math.min(min[k], v)), (max[k] = Math.max(max[k], v))));
  const eyeNodes: [number, number, number][] = [];
  let bodyTop = -Infinity;
  const root = doc.getRoot();
  const scene = root.getDefaultScene() ?? root.listScenes()[0];
  const nodes: ReturnType<typeof root.listNodes> = [];
  scene?.traverse((n) => void nodes.push(n));
  for (const node of nodes) {
    const m = node.getWorldMatrix();
    if (/^EyeLeft|^EyeRight/i.test(node.getName())) eyeNodes.push([m[12], m[13], m[14]]);
    const mesh = node.getMesh();
    if (!mesh) continue;
    const isBody = /^(Body|Torso|Shirt)/i.test(node.getName());
    // Normals should go through the inverse transpose; for the rotations and uniform scales of face rigs the matrix itself does.
    for (const prim of mesh.listPrimitives()) {
      if (prim.getMode() !== 4) continue;
      const local = read(prim.getAttribute('POSITION'), 3);
      if (!local.length) continue;
      // Bounds as three.js takes them (client/scene.ts, Box3.setFromObject): the geometry's box,
      // grown by each morph target's box, then its corners transformed to world space.
      const { min: lmin, max: lmax } = bounds(local);
      const bmin = [...lmin];
      const bmax = [...lmax];
      for (const target of prim.listTargets()) {
        const d = read(target.getAttribute('POSITION'), 3);
        if (!d.length) continue;
        const { min: tmin, max: tmax } = bounds(d);
        for (let k = 0; k < 3; k++) {
          bmin[k] = Math.min(bmin[k], lmin[k] + tmin[k], lmax[k] + tmax[k]);
          bmax[k] = Math.max(bmax[k], lmin[k] + tmin[k], lmax[k] + tmax[k]);
        }
      }
      let primTop = -Infinity;
      for (const cx of [bmin[0], bmax[0]])
        for (const cy of [bmin[1], bmax[1]])
          for (const cz of [bmin[2], bmax[2]]) {
            const w = mul4(m, cx, cy, cz, 1);
            grow(w);
            primTop = Math.max(primTop, w[1]);
          }
      if (isBody) bodyTop = Math.max(bodyTop, primTop);
      const pos = new Float32Array(local.length);
      for (let i = 0; i < local.length; i += 3) pos.set(mul4(m, local[i], local[i + 1], local[i + 2], 1), i);
      const localN = read(prim.getAttribute('NORMAL'), 3);
      const nrm = new Float32Array(localN.length);
      for (let i = 0; i < localN.length; i += 3) {
        const n = mul4(m, localN[i], localN[i + 1], localN[i + 2], 0);
        const l = Math.hypot(n[0], n[1], n[2]) || 1;
        nrm[i] = n[0] / l;
        nrm[i + 1] = n[1] / l;
        nrm[i + 2] = n[2] / l;
      }
      const material: Material | null = prim.getMaterial();
      const tex = material?.getBaseColorTexture() ?? null;
      if (tex && !textures.has(tex)) textures.set(tex, decodeImage(tex.getImage() ?? new Uint8Array(0), tex.getMimeType()));
      const colors = read(prim.getAttribute('COLOR_0'), 4);
      const colorSize = prim.getAttribute('COLOR_0')?.getElementSize() ?? 0;
      const col = new Float32Array((local.length / 3) * 3);
      if (colors.length) for (let i = 0; i < local.length / 3; i++) for (let k = 0; k < 3; k++) col[i * 3 + k] = colorSize >= 3 ? colors[i * 4 + k] : 1;
      const indices = prim.getIndices();
      const index = indices ? Uint32Array.from(indices.getArray() as ArrayLike<number>) : Uint32Array.from({ length: local.length / 3 }, (_, i) => i);
      const base = material?.getBaseColorFactor() ?? [1, 1, 1, 1];
      parts.push({
        pos,
        nrm,
        uv: tex ? read(prim.getAttribute(`TEXCOORD_${material!.getBaseColorTextureInfo()?.getTexCoord() ?? 0}`), 2) : new Float32Array(0),
        col: colors.length ? col : new Float32Array(0),
        index,
        color: [base[0], base[1], base[2], base[3]],
        texture: tex ? (textures.get(tex) ?? null) : null,
        mode: (material?.getAlphaMode() ?? 'OPAQUE') as Part['mode'],
        cutoff: material?.getAlphaCutoff() ?? 0.5,
        doubleSided: material?.getDoubleSided() ?? false,
      });
    }
  }
  const eyes = eyeNodes.length >= 2 ? ([0, 1, 2].map((k) => (eyeNodes[0][k] + eyeNodes[1][k]) / 2) as [number, number, number]) : null;
  return { parts, box: { min, max }, eyes, bodyTop };
}

// ---- the camera: the page's mid shot

interface Camera {
  pos: number[];
  right: number[];
  up: number[];
  fwd: number[];
  placement: Omit<StillPlacement, 'x0' | 'x1' | 'y0' | 'y1'>;
}

function midShot(s: Scene): Camera {
  const { min, max } = s.box;
  const size = [0, 1, 2].map((k) => max[k] - min[k]);
  const center = [0, 1, 2].map((k) => (max[k] + min[k]) / 2);
  const eyes = s.eyes ?? [center[0], min[1] + size[1] * 0.62, max[2] - size[2] * 0.15];
  const headHeight = Math.min(size[1], (max[1] - eyes[1]) * 2.05);
  const headWidth = Math.min(size[0], headHeight * 0.78);
  const bottom = min[1];
  const margin = headHeight * 0.15;
  const room = eyes[1] - bottom - margin;
  const cap = Math.max(headHeight * 1.1, room / (1 - MID.eyes));
  // A landscape frame (the reference): the framed height is the shot's, capped by the bust.
  const height = Math.min(MID.height * headHeight, cap);
  const tan = Math.tan((FOV * Math.PI) / 360);
  const dist = height / 2 / tan;
  const targetY = Math.max(eyes[1] - height * (0.5 - MID.eyes), bottom + margin + height / 2);
  const target = [eyes[0], targetY, eyes[2]];
  const pos = [eyes[0], targetY + height * 0.04, eyes[2] + dist];
  const f = target.map((v, k) => v - pos[k]);
  const fl = Math.hypot(f[0], f[1], f[2]);
  const fwd = f.map((v) => v / fl);
  // right = fwd × up(0,1,0); up = right × fwd
  const r = [-fwd[2], 0, fwd[0]];
  const rl = Math.hypot(r[0], r[2]);
  const right = r.map((v) => v / rl);
  const up = [right[1] * fwd[2] - right[2] * fwd[1], right[2] * fwd[0] - right[0] * fwd[2], right[0] * fwd[1] - right[1] * fwd[0]];
  // Pixels per tangent unit in a W×H view: H/(2·tan) while the framed height is the reference's;
  // narrow views frame MID.width head widths across (the camera backs off); never beyond the cap.
  return {
    pos,
    right,
    up,
    fwd,
    placement: { a: height / (2 * tan * cap), b: 1 / (2 * tan), c: height / (2 * tan * MID.width * headWidth) },
  };
}

// ---- the rasteriser

/** Renders the face's still from its GLB bytes. */
export async function renderStill(glb: Uint8Array, options: StillOptions = {}): Promise<Still> {
  const started = performance.now();
  await MeshoptDecoder.ready;
  const doc = await io().readBinary(glb);
  const scene = await sceneOf(doc);
  if (!scene.parts.length) throw new Error('the model has no triangles');
  const cam = midShot(scene);
  const tan = Math.tan((FOV * Math.PI) / 360);
  const frameHeight = options.frameHeight ?? 400;
  // The picture's extent: the model's projection, within a generous window round the frame.
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  const project = (p: ArrayLike<number>, i: number, out: number[]) => {
    const dx = p[i] - cam.pos[0];
    const dy = p[i + 1] - cam.pos[1];
    const dz = p[i + 2] - cam.pos[2];
    const z = dx * cam.fwd[0] + dy * cam.fwd[1] + dz * cam.fwd[2];
    out[0] = (dx * cam.right[0] + dy * cam.right[1] + dz * cam.right[2]) / z;
    out[1] = (dx * cam.up[0] + dy * cam.up[1] + dz * cam.up[2]) / z;
    out[2] = z;
  };
  const t: number[] = [0, 0, 0];
  for (const part of scene.parts) {
    for (let i = 0; i < part.pos.length; i += 3) {
      project(part.pos, i, t);
      if (t[2] <= 0) continue;
      x0 = Math.min(x0, t[0]);
      x1 = Math.max(x1, t[0]);
      y0 = Math.min(y0, t[1]);
      y1 = Math.max(y1, t[1]);
    }
  }
  x0 = Math.max(x0, -tan * 2.4);
  x1 = Math.min(x1, tan * 2.4);
  y0 = Math.max(y0, -tan * 1.35);
  y1 = Math.min(y1, tan * 1.4);
  const scale = frameHeight / (2 * tan); // pixels per tangent unit
  const width = Math.max(1, Math.ceil((x1 - x0) * scale));
  const height = Math.max(1, Math.ceil((y1 - y0) * scale));
  x1 = x0 + width / scale;
  y0 = y1 - height / scale;
  const SS = 2;
  const W = width * SS;
  const H = height * SS;
  const ss = scale * SS;
  const color = new Float32Array(W * H * 3);
  const alpha = new Float32Array(W * H);
  const depth = new Float32Array(W * H).fill(Infinity);

  const exposure = exposureFor(options.skin);
  const lights = LIGHTS.map((l) => {
    const d = Math.hypot(...l.dir);
    const c = hexRgb(l.color);
    return { dir: l.dir.map((v) => v / d), rgb: c.map((v) => (v * l.intensity) / Math.PI) };
  });
  const sky = hexRgb(HEMI.sky);
  const ground = hexRgb(HEMI.ground);
  const irradiance = (nx: number, ny: number, nz: number, out: Float32Array) => {
    const h = 0.5 * ny + 0.5;
    out[0] = ((ground[0] + (sky[0] - ground[0]) * h) * HEMI.intensity) / Math.PI + AMBIENT_LIFT;
    out[1] = ((ground[1] + (sky[1] - ground[1]) * h) * HEMI.intensity) / Math.PI + AMBIENT_LIFT;
    out[2] = ((ground[2] + (sky[2] - ground[2]) * h) * HEMI.intensity) / Math.PI + AMBIENT_LIFT;
    for (const l of lights) {
      const d = nx * l.dir[0] + ny * l.dir[1] + nz * l.dir[2];
      if (d <= 0) continue;
      out[0] += l.rgb[0] * d;
      out[1] += l.rgb[1] * d;
      out[2] += l.rgb[2] * d;
    }
  };

  // Opaque and alpha-tested parts first (depth written), blended ones after (depth tested).
  const order = [...scene.parts.filter((p) => p.mode !== 'BLEND'), ...scene.parts.filter((p) => p.mode === 'BLEND')];
  const sx = new Float32Array(3);
  const sy = new Float32Array(3);
  const sz = new Float32Array(3);
  const irr = new Float32Array(3);
  const texel = new Float32Array(4);
  for (const part of order) {
    const n = part.pos.length / 3;
    const px = new Float32Array(n);
    const py = new Float32Array(n);
    const pz = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      project(part.pos, i * 3, t);
      px[i] = (t[0] - x0) * ss;
      py[i] = (y1 - t[1]) * ss;
      pz[i] = t[2];
    }
    const tex = part.texture;
    const hasUv = !!tex && part.uv.length > 0;
    const hasN = part.nrm.length > 0;
    const hasCol = part.col.length > 0;
    const blend = part.mode === 'BLEND';
    const sample = (u: number, v: number) => {
      // bilinear, repeat
      const w = tex!.width;
      const h = tex!.height;
      const fx = (u - Math.floor(u)) * w - 0.5;
      const fy = (v - Math.floor(v)) * h - 0.5;
      const ix = Math.floor(fx);
      const iy = Math.floor(fy);
      const ax = fx - ix;
      const ay = fy - iy;
      const xA = ((ix % w) + w) % w;
      const xB = (xA + 1) % w;
      const yA = ((iy % h) + h) % h;
      const yB = (yA + 1) % h;
      const d = tex!.data;
      const o00 = (yA * w + xA) * 4;
      const o10 = (yA * w + xB) * 4;
      const o01 = (yB * w + xA) * 4;
      const o11 = (yB * w + xB) * 4;
      for (let k = 0; k < 3; k++) {
        const top = SRGB_TO_LINEAR[d[o00 + k]] * (1 - ax) + SRGB_TO_LINEAR[d[o10 + k]] * ax;
        const bot = SRGB_TO_LINEAR[d[o01 + k]] * (1 - ax) + SRGB_TO_LINEAR[d[o11 + k]] * ax;
        texel[k] = top * (1 - ay) + bot * ay;
      }
      texel[3] = ((d[o00 + 3] * (1 - ax) + d[o10 + 3] * ax) * (1 - ay) + (d[o01 + 3] * (1 - ax) + d[o11 + 3] * ax) * ay) / 255;
    };
    const idx = part.index;
    for (let f = 0; f + 2 < idx.length; f += 3) {
      const i0 = idx[f];
      const i1 = idx[f + 1];
      const i2 = idx[f + 2];
      if (pz[i0] <= 0.01 || pz[i1] <= 0.01 || pz[i2] <= 0.01) continue;
      (sx[0] = px[i0]), (sx[1] = px[i1]), (sx[2] = px[i2]);
      (sy[0] = py[i0]), (sy[1] = py[i1]), (sy[2] = py[i2]);
      (sz[0] = pz[i0]), (sz[1] = pz[i1]), (sz[2] = pz[i2]);
      // Signed area; glTF's front faces are counter-clockwise, i.e. clockwise with y down.
      const area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0]);
      if (area === 0 || (!part.doubleSided && area > 0)) continue;
      const minX = Math.max(0, Math.floor(Math.min(sx[0], sx[1], sx[2])));
      const maxX = Math.min(W - 1, Math.ceil(Math.max(sx[0], sx[1], sx[2])));
      const minY = Math.max(0, Math.floor(Math.min(sy[0], sy[1], sy[2])));
      const maxY = Math.min(H - 1, Math.ceil(Math.max(sy[0], sy[1], sy[2])));
      if (minX > maxX || minY > maxY) continue;
      const back = area > 0;
      const inv = 1 / area;
      // perspective-correct weights: interpolate 1/z
      const iz0 = 1 / sz[0];
      const iz1 = 1 / sz[1];
      const iz2 = 1 / sz[2];
      for (let y = minY; y <= maxY; y++) {
        const cy = y + 0.5;
        for (let x = minX; x <= maxX; x++) {
          const cx = x + 0.5;
          let w0 = ((sx[1] - cx) * (sy[2] - cy) - (sx[2] - cx) * (sy[1] - cy)) * inv;
          let w1 = ((sx[2] - cx) * (sy[0] - cy) - (sx[0] - cx) * (sy[2] - cy)) * inv;
          let w2 = 1 - w0 - w1;
          if (w0 < 0 || w1 < 0 || w2 < 0) continue;
          const iz = w0 * iz0 + w1 * iz1 + w2 * iz2;
          const z = 1 / iz;
          const o = y * W + x;
          if (z >= depth[o]) continue;
          w0 = w0 * iz0 * z;
          w1 = w1 * iz1 * z;
          w2 = w2 * iz2 * z;
          let r = part.color[0];
          let g = part.color[1];
          let b = part.color[2];
          let a = part.color[3];
          if (hasUv) {
            const u = part.uv[i0 * 2] * w0 + part.uv[i1 * 2] * w1 + part.uv[i2 * 2] * w2;
            const v = part.uv[i0 * 2 + 1] * w0 + part.uv[i1 * 2 + 1] * w1 + part.uv[i2 * 2 + 1] * w2;
            sample(u, v);
            r *= texel[0];
            g *= texel[1];
            b *= texel[2];
            a *= texel[3];
          }
          if (hasCol) {
            r *= part.col[i0 * 3] * w0 + part.col[i1 * 3] * w1 + part.col[i2 * 3] * w2;
            g *= part.col[i0 * 3 + 1] * w0 + part.col[i1 * 3 + 1] * w1 + part.col[i2 * 3 + 1] * w2;
            b *= part.col[i0 * 3 + 2] * w0 + part.col[i1 * 3 + 2] * w1 + part.col[i2 * 3 + 2] * w2;
          }
          if (part.mode === 'MASK' && a < part.cutoff) continue;
          if (blend && a < 0.004) continue;
          let nx: number;
          let ny: number;
          let nz: number;
          if (hasN) {
            nx = part.nrm[i0 * 3] * w0 + part.nrm[i1 * 3] * w1 + part.nrm[i2 * 3] * w2;
            ny = part.nrm[i0 * 3 + 1] * w0 + part.nrm[i1 * 3 + 1] * w1 + part.nrm[i2 * 3 + 1] * w2;
            nz = part.nrm[i0 * 3 + 2] * w0 + part.nrm[i1 * 3 + 2] * w1 + part.nrm[i2 * 3 + 2] * w2;
          } else {
            const p = part.pos;
            const ax = p[i1 * 3] - p[i0 * 3],
              ay = p[i1 * 3 + 1] - p[i0 * 3 + 1],
              az = p[i1 * 3 + 2] - p[i0 * 3 + 2];
            const bx = p[i2 * 3] - p[i0 * 3],
              by = p[i2 * 3 + 1] - p[i0 * 3 + 1],
              bz = p[i2 * 3 + 2] - p[i0 * 3 + 2];
            nx = ay * bz - az * by;
            ny = az * bx - ax * bz;
            nz = ax * by - ay * bx;
          }
          const nl = Math.hypot(nx, ny, nz) || 1;
          const flip = back ? -1 : 1;
          irradiance((nx / nl) * flip, (ny / nl) * flip, (nz / nl) * flip, irr);
          const o3 = o * 3;
          if (blend) {
            const k = Math.min(1, a);
            color[o3] = color[o3] * (1 - k) + r * irr[0] * k;
            color[o3 + 1] = color[o3 + 1] * (1 - k) + g * irr[1] * k;
            color[o3 + 2] = color[o3 + 2] * (1 - k) + b * irr[2] * k;
            alpha[o] = alpha[o] + k * (1 - alpha[o]);
          } else {
            depth[o] = z;
            color[o3] = r * irr[0];
            color[o3 + 1] = g * irr[1];
            color[o3 + 2] = b * irr[2];
            alpha[o] = 1;
          }
        }
      }
    }
  }

  // Tone map each sample, then average the 2×2 samples (alpha-weighted) into the picture.
  const rgba = new Uint8Array(width * height * 4);
  const mapped = new Float32Array(3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let dy = 0; dy < SS; dy++) {
        for (let dx = 0; dx < SS; dx++) {
          const o = (y * SS + dy) * W + x * SS + dx;
          const al = alpha[o];
          if (al <= 0) continue;
          aces(color[o * 3] * exposure, color[o * 3 + 1] * exposure, color[o * 3 + 2] * exposure, mapped);
          r += mapped[0] * al;
          g += mapped[1] * al;
          b += mapped[2] * al;
          a += al;
        }
      }
      const o = (y * width + x) * 4;
      if (a <= 0) continue;
      rgba[o] = Math.round(linearToSrgb(r / a) * 255);
      rgba[o + 1] = Math.round(linearToSrgb(g / a) * 255);
      rgba[o + 2] = Math.round(linearToSrgb(b / a) * 255);
      rgba[o + 3] = Math.round((a / (SS * SS)) * 255);
    }
  }
  const png = encodeRgbaPng(rgba, width, height);
  const round = (v: number) => Math.round(v * 1e5) / 1e5;
  return {
    png,
    width,
    height,
    placement: { x0: round(x0), x1: round(x1), y0: round(y0), y1: round(y1), a: round(cam.placement.a), b: round(cam.placement.b), c: round(cam.placement.c) },
    ms: Math.round(performance.now() - started),
  };
}
