/**
 * A small stand-in face GLB for tests (until the generated faces exist): an ellipsoid head with
 * a few viseme_* and ARKit morph targets, eyeball nodes EyeLeft/EyeRight, meshopt-compressed like
 * the real faces.
 */
import { Document, NodeIO, type Material, type Node } from '@gltf-transform/core';
import { EXTMeshoptCompression } from '@gltf-transform/extensions';
import { MeshoptEncoder } from 'meshoptimizer';

const MORPHS = [
  'jawOpen',
  'viseme_aa',
  'viseme_O',
  'viseme_E',
  'viseme_PP',
  'viseme_FF',
  'viseme_SS',
  'viseme_U',
  'viseme_I',
  'viseme_sil',
  'eyeBlinkLeft',
  'eyeBlinkRight',
  'mouthSmileLeft',
  'mouthSmileRight',
  'browInnerUp',
];

function sphere(seg: number, rings: number) {
  const pos: number[] = [];
  const idx: number[] = [];
  for (let r = 0; r <= rings; r++) {
    const v = r / rings;
    const phi = v * Math.PI;
    for (let s = 0; s <= seg; s++) {
      const th = (s / seg) * Math.PI * 2;
      pos.push(Math.sin(phi) * Math.sin(th), Math.cos(phi), Math.sin(phi) * Math.cos(th));
    }
  }
  for (let r = 0; r < rings; r++)
    for (let s = 0; s < seg; s++) {
      const a = r * (seg + 1) + s;
      const b = a + seg + 1;
      idx.push(a, b, a + 1, b, b + 1, a + 1);
    }
  return { pos, idx };
}

function normals(pos: Float32Array, idx: Uint32Array): Float32Array {
  const n = new Float32Array(pos.length);
  for (let i = 0; i < idx.length; i += 3) {
    const [a, b, c] = [idx[i] * 3, idx[i + 1] * 3, idx[i + 2] * 3];
    const ux = pos[b] - pos[a],
      uy = pos[b + 1] - pos[a + 1],
      uz = pos[b + 2] - pos[a + 2];
    const vx = pos[c] - pos[a],
      vy = pos[c + 1] - pos[a + 1],
      vz = pos[c + 2] - pos[a + 2];
    const nx = uy * vz - uz * vy,
      ny = uz * vx - ux * vz,
      nz = ux * vy - uy * vx;
    for (const k of [a, b, c]) (n[k] += nx), (n[k + 1] += ny), (n[k + 2] += nz);
  }
  for (let i = 0; i < n.length; i += 3) {
    const l = Math.hypot(n[i], n[i + 1], n[i + 2]) || 1;
    (n[i] /= l), (n[i + 1] /= l), (n[i + 2] /= l);
  }
  return n;
}

function addSphereMesh(doc: Document, name: string, material: Material, scale: [number, number, number], morphs: boolean, seg = 48): Node {
  const buffer = doc.getRoot().listBuffers()[0];
  const { pos, idx } = sphere(seg, Math.round(seg / 2));
  const p = new Float32Array(pos.length);
  for (let i = 0; i < pos.length; i += 3) {
    let x = pos[i] * scale[0],
      y = pos[i + 1] * scale[1],
      z = pos[i + 2] * scale[2];
    if (morphs) {
      // Narrower jaw, a nose bump.
      if (y < 0) x *= 1 - 0.25 * (-y / scale[1]);
      const nose = Math.exp(-((x / 0.018) ** 2 + ((y + 0.01) / 0.03) ** 2)) * (z > 0 ? 1 : 0);
      z += nose * 0.02;
    }
    (p[i] = x), (p[i + 1] = y), (p[i + 2] = z);
  }
  const ix = new Uint32Array(idx);
  const prim = doc
    .createPrimitive()
    .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(p).setBuffer(buffer))
    .setAttribute('NORMAL', doc.createAccessor().setType('VEC3').setArray(normals(p, ix)).setBuffer(buffer))
    .setIndices(doc.createAccessor().setType('SCALAR').setArray(ix).setBuffer(buffer))
    .setMaterial(material);
  if (morphs) {
    for (const name of MORPHS) {
      const d = new Float32Array(p.length);
      for (let i = 0; i < p.length; i += 3) {
        const x = p[i],
          y = p[i + 1],
          z = p[i + 2];
        const mouth = z > 0.04 && y < -0.02 && y > -0.09 ? Math.exp(-(((y + 0.05) / 0.025) ** 2) - (x / 0.04) ** 2) : 0;
        const jaw = z > -0.02 && y < -0.03 ? Math.min(1, (-0.03 - y) / 0.04) : 0;
        if (name === 'jawOpen' || name === 'viseme_aa') d[i + 1] = -0.025 * jaw;
        else if (name === 'viseme_O' || name === 'viseme_U') (d[i] = -0.3 * x * mouth), (d[i + 2] = 0.01 * mouth);
        else if (name.startsWith('viseme_E') || name === 'viseme_I' || name === 'viseme_SS') d[i] = 0.25 * x * mouth;
        else if (name.startsWith('mouthSmile')) d[i + 1] = (0.006 * mouth * Math.abs(x)) / 0.03;
        else if (name === 'browInnerUp') d[i + 1] = y > 0.03 && z > 0.05 ? 0.004 : 0;
      }
      prim.addTarget(doc.createPrimitiveTarget(name).setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(d).setBuffer(buffer)));
    }
  }
  const mesh = doc.createMesh(name).addPrimitive(prim);
  if (morphs) mesh.setWeights(MORPHS.map(() => 0));
  return doc.createNode(name).setMesh(mesh);
}

/** Builds the fixture face; `tone` tints the skin so two fixture faces look different. */
export async function fixtureFaceGlb(tone = '#d9a98a'): Promise<Uint8Array> {
  const doc = new Document();
  doc.createBuffer();
  const c = parseInt(tone.slice(1), 16);
  const lin = (v: number) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  const skin = doc
    .createMaterial('skin')
    .setBaseColorFactor([lin(c >> 16), lin((c >> 8) & 255), lin(c & 255), 1])
    .setRoughnessFactor(0.55)
    .setMetallicFactor(0);
  const white = doc.createMaterial('eye').setBaseColorFactor([0.85, 0.85, 0.82, 1]).setRoughnessFactor(0.1).setMetallicFactor(0);
  const iris = doc.createMaterial('iris').setBaseColorFactor([0.05, 0.03, 0.02, 1]).setRoughnessFactor(0.2).setMetallicFactor(0);
  const head = addSphereMesh(doc, 'Head', skin, [0.078, 0.115, 0.095], true).setTranslation([0, 1.55, 0]);
  const scene = doc.createScene('Scene').addChild(head);
  for (const [name, x] of [
    ['EyeLeft', 0.032],
    ['EyeRight', -0.032],
  ] as const) {
    const eye = addSphereMesh(doc, name, white, [0.012, 0.012, 0.012], false, 24).setTranslation([x, 1.585, 0.07]);
    const pupil = addSphereMesh(doc, `${name}Iris`, iris, [0.006, 0.006, 0.002], false, 16).setTranslation([0, 0, 0.0115]);
    eye.addChild(pupil);
    scene.addChild(eye);
  }
  await MeshoptEncoder.ready;
  doc.createExtension(EXTMeshoptCompression).setRequired(true).setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.QUANTIZE });
  const io = new NodeIO().registerExtensions([EXTMeshoptCompression]).registerDependencies({ 'meshopt.encoder': MeshoptEncoder });
  return io.writeBinary(doc);
}
