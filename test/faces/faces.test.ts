/**
 * The built-in faces: every catalogue face generates into a GLB within budget, carries the full
 * viseme + ARKit morph set, and the key morphs move the parts of the face their names promise.
 * Geometry is read back through gltf-transform (meshopt-decoded) and measured in metres in the
 * model's own space (node transforms applied, since quantisation moves scale into the nodes).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Document, NodeIO, type Node, type Primitive } from '@gltf-transform/core';
import { BUILTIN_FACES } from '../../src/catalog/faces.js';
import { ensureFaces, validateFaceGlb, VISEMES, ARKIT } from '../../src/player/faces/index.js';
import { readGlb } from '../../src/player/faces/glb.js';

let dir: string;
const docs = new Map<string, Document>();
const sizes = new Map<string, number>();

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'faces-'));
  await ensureFaces(dir);
  for (const f of BUILTIN_FACES) {
    const buf = await fs.readFile(path.join(dir, `${f.avatar_id}.glb`));
    sizes.set(f.avatar_id, buf.byteLength);
    docs.set(f.avatar_id, await readGlb(new Uint8Array(buf)));
  }
});

function node(doc: Document, name: string): Node {
  const n = doc.getRoot().listNodes().find((x) => x.getName() === name);
  assert.ok(n, `node ${name} exists`);
  return n;
}

/** World-space positions (metres) and, for a named target, world-space deltas of a node's first primitive. */
function geometry(n: Node, target?: string): { pos: number[][]; delta: number[][] } {
  const prim = n.getMesh()!.listPrimitives()[0] as Primitive;
  const m = n.getWorldMatrix();
  const apply = (v: number[], w: number) => [0, 1, 2].map((r) => m[r] * v[0] + m[4 + r] * v[1] + m[8 + r] * v[2] + m[12 + r] * w);
  const acc = prim.getAttribute('POSITION')!;
  const pos: number[][] = [];
  const el: number[] = [];
  for (let i = 0; i < acc.getCount(); i++) pos.push(apply(acc.getElement(i, el).slice(), 1));
  const delta: number[][] = [];
  if (target) {
    const names = (n.getMesh()!.getExtras() as { targetNames: string[] }).targetNames;
    const ti = names.indexOf(target);
    assert.ok(ti >= 0, `${n.getName()} has morph ${target}`);
    const t = prim.listTargets()[ti].getAttribute('POSITION')!;
    for (let i = 0; i < t.getCount(); i++) delta.push(apply(t.getElement(i, el).slice(), 0));
  }
  return { pos, delta };
}

test('every catalogue face is generated, under 3 MB', () => {
  for (const f of BUILTIN_FACES) {
    const size = sizes.get(f.avatar_id)!;
    assert.ok(size > 50_000 && size < 3 * 1024 * 1024, `${f.avatar_id}: ${size} bytes`);
  }
});

test('every face has all 15 visemes and the 52 ARKit shapes on the head mesh', () => {
  assert.equal(VISEMES.length, 15);
  assert.equal(ARKIT.length, 52);
  for (const [id, doc] of docs) {
    const names = (node(doc, 'Head').getMesh()!.getExtras() as { targetNames: string[] }).targetNames;
    for (const n of [...VISEMES, ...ARKIT]) assert.ok(names.includes(n), `${id} lacks ${n}`);
    assert.equal(node(doc, 'Head').getMesh()!.listPrimitives()[0].listTargets().length, names.length);
  }
});

test('the shirt faces outwards, and the collar sits a few centimetres below the chin', () => {
  // Inward-facing triangles are culled from the front: the viewer would see the shirt's inside
  // back wall, lit backwards, and the whole neck down into the shirt.
  for (const [id, doc] of docs) {
    const body = node(doc, 'Body');
    const { pos } = geometry(body);
    const index = body.getMesh()!.listPrimitives()[0].getIndices()!.getArray()!;
    const cz = pos.reduce((sum, p) => sum + p[2], 0) / pos.length;
    let outward = 0;
    for (let t = 0; t < index.length; t += 3) {
      const [a, b, c] = [pos[index[t]], pos[index[t + 1]], pos[index[t + 2]]];
      const u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
      const v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
      const n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
      const centre = [(a[0] + b[0] + c[0]) / 3, 0, (a[2] + b[2] + c[2]) / 3 - cz];
      if (n[0] * centre[0] + n[2] * centre[2] > 0) outward++;
    }
    const share = outward / (index.length / 3);
    assert.ok(share > 0.97, `${id}: ${(share * 100).toFixed(1)}% of the shirt's triangles face outwards`);
    // Chin (the head's lowest front point above the neck) to the collar's top: 3 to 8 cm.
    const head = geometry(node(doc, 'Head')).pos;
    const chin = Math.min(...head.filter((p) => p[2] > 0.036 && p[1] > -0.14 && Math.abs(p[0]) < 0.01).map((p) => p[1]));
    const collar = Math.max(...pos.map((p) => p[1]));
    assert.ok(chin - collar > 0.03 && chin - collar < 0.08, `${id}: chin ${chin.toFixed(3)} m, collar ${collar.toFixed(3)} m`);
  }
});

test('jawOpen lowers the chin by over a centimetre and opens the lower teeth', () => {
  for (const [id, doc] of docs) {
    const { pos, delta } = geometry(node(doc, 'Head'), 'jawOpen');
    // chin: the lowest skin vertex on the midline in front of the neck
    let chin = -1;
    pos.forEach((p, i) => {
      if (Math.abs(p[0]) < 0.004 && p[2] > 0.03 && p[1] > -0.12 && (chin < 0 || p[1] < pos[chin][1])) chin = i;
    });
    assert.ok(chin >= 0);
    assert.ok(delta[chin][1] < -0.01, `${id}: chin moves ${delta[chin][1]} m`);
    // forehead stays
    let brow = -1;
    pos.forEach((p, i) => {
      if (Math.abs(p[0]) < 0.004 && p[1] > 0.05 && p[2] > 0.03 && (brow < 0 || p[2] > pos[brow][2])) brow = i;
    });
    assert.ok(Math.hypot(...delta[brow]) < 1e-4, `${id}: forehead moves under jawOpen`);
    const teeth = geometry(node(doc, 'Teeth'), 'jawOpen');
    const down = teeth.delta.filter((d) => d[1] < -0.005).length;
    const still = teeth.delta.filter((d) => Math.hypot(...d) < 1e-5).length;
    assert.ok(down > 100 && still > 100, `${id}: lower teeth move (${down}), upper stay (${still})`);
  }
});

test('eyeBlinkLeft closes only the left eye, eyeBlinkRight only the right', () => {
  for (const [id, doc] of docs) {
    for (const [name, sign] of [['eyeBlinkLeft', 1], ['eyeBlinkRight', -1]] as const) {
      const { pos, delta } = geometry(node(doc, 'Head'), name);
      const moved = delta.map((d, i) => [Math.hypot(...d), i] as const).filter(([m]) => m > 2e-4);
      assert.ok(moved.length > 20, `${id} ${name}: ${moved.length} vertices move`);
      for (const [, i] of moved) assert.ok(pos[i][0] * sign > 0.005, `${id} ${name}: vertex at x=${pos[i][0]} moves`);
      // the upper lid comes down by most of the eye opening (~7 mm)
      const maxDown = Math.min(...delta.map((d) => d[1]));
      assert.ok(maxDown < -0.005, `${id} ${name}: lid drops ${maxDown} m`);
    }
  }
});

test('smile raises the mouth corners; visemes aa and O open the mouth and O narrows it', () => {
  for (const [id, doc] of docs) {
    const head = node(doc, 'Head');
    const smile = geometry(head, 'mouthSmileLeft');
    const aa = geometry(head, 'viseme_aa');
    const o = geometry(head, 'viseme_O');
    // mouth corner: the left-most... use the skin vertex nearest the canonical corner region
    const corner = smile.pos.reduce((best, p, i) => {
      const d = Math.hypot(p[0] - 0.025, p[1] + 0.043, p[2] - 0.043);
      return d < best.d ? { d, i } : best;
    }, { d: Infinity, i: -1 }).i;
    assert.ok(smile.delta[corner][1] > 0.002, `${id}: smile lifts the corner ${smile.delta[corner][1]}`);
    const rightCorner = smile.pos.reduce((best, p, i) => {
      const d = Math.hypot(p[0] + 0.025, p[1] + 0.043, p[2] - 0.043);
      return d < best.d ? { d, i } : best;
    }, { d: Infinity, i: -1 }).i;
    assert.ok(Math.abs(smile.delta[rightCorner][1]) < smile.delta[corner][1] / 4, `${id}: mouthSmileLeft is one-sided`);
    const chinish = aa.pos.reduce((best, p, i) => (Math.abs(p[0]) < 0.004 && p[2] > 0.03 && p[1] > -0.12 && (best < 0 || p[1] < aa.pos[best][1]) ? i : best), -1);
    assert.ok(aa.delta[chinish][1] < -0.008, `${id}: viseme_aa drops the jaw`);
    assert.ok(o.delta[corner][0] < -0.001, `${id}: viseme_O pulls the left corner inwards`);
  }
});

test('eyes are separate nodes centred on their eyeballs, with iris looking forward', () => {
  for (const [id, doc] of docs) {
    for (const [name, sign] of [['EyeLeft', 1], ['EyeRight', -1]] as const) {
      const n = node(doc, name);
      const t = n.getWorldMatrix();
      assert.ok(t[12] * sign > 0.01, `${id} ${name} on its side (x=${t[12]})`);
      const { pos } = geometry(n);
      const c = [0, 1, 2].map((k) => pos.reduce((s, p) => s + p[k], 0) / pos.length);
      // the geometry is a sphere about the node's origin (within the corneal bulge)
      assert.ok(Math.hypot(c[0] - t[12], c[1] - t[13]) < 0.001, `${id} ${name} centred`);
      assert.notEqual(n.getParentNode()?.getName(), 'Head', 'eyes are not children of the morphing head');
    }
    assert.ok(node(doc, 'Teeth').getMesh());
    assert.ok(node(doc, 'Tongue').getMesh());
    assert.ok(node(doc, 'Hair').getMesh());
  }
});

test('validateFaceGlb accepts the built faces and rejects a GLB without morphs', async () => {
  for (const f of BUILTIN_FACES) {
    const buf = new Uint8Array(await fs.readFile(path.join(dir, `${f.avatar_id}.glb`)));
    const v = validateFaceGlb(buf);
    assert.ok(v.ok, `${f.avatar_id}: ${v.problems.join('; ')}`);
    assert.equal(v.sizeBytes, buf.byteLength);
    assert.ok(v.morphs.includes('viseme_aa') && v.morphs.includes('jawOpen'));
  }
  const doc = new Document();
  const buffer = doc.createBuffer();
  const prim = doc.createPrimitive().setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0])).setBuffer(buffer));
  doc.createScene().addChild(doc.createNode('Plain').setMesh(doc.createMesh('Plain').addPrimitive(prim)));
  const plain = await new NodeIO().writeBinary(doc);
  const bad = validateFaceGlb(plain);
  assert.equal(bad.ok, false);
  assert.ok(bad.problems.some((p) => p.includes('viseme')), bad.problems.join('; '));
  assert.deepEqual(bad.morphs, []);
  assert.equal(validateFaceGlb(new TextEncoder().encode('definitely not a glb file')).ok, false);
  const big = validateFaceGlb(new Uint8Array(await fs.readFile(path.join(dir, 'face01.glb'))), 1000);
  assert.equal(big.ok, false, 'size limit enforced');
});

test('ensureFaces only rebuilds missing or outdated files', async () => {
  const file = path.join(dir, 'face03.glb');
  const before = (await fs.stat(path.join(dir, 'face01.glb'))).mtimeMs;
  await fs.rm(file);
  await ensureFaces(dir);
  assert.ok((await fs.stat(file)).size > 50_000, 'missing face regenerated');
  assert.equal((await fs.stat(path.join(dir, 'face01.glb'))).mtimeMs, before, 'up-to-date face left alone');
});
