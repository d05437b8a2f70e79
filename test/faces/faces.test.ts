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
import { BUILTIN_FACES } from '../../src/faces/builtin.js';
import { ensureFaces, validateFaceGlb, VISEMES, ARKIT } from '../../src/faces/index.js';
import { readGlb } from '../../src/faces/glb.js';
import { FACES_DIR } from '../../src/player/routes.js';

let dir: string;
const docs = new Map<string, Document>();
const sizes = new Map<string, number>();

before(async () => {
  // The faces npm install built (build/faces) are copied with their stamps: ensureFaces keeps the
  // up-to-date ones and rebuilds whatever the current generator would make differently.
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'faces-'));
  await ensureFaces(FACES_DIR);
  for (const f of await fs.readdir(FACES_DIR)) await fs.copyFile(path.join(FACES_DIR, f), path.join(dir, f));
  await ensureFaces(dir);
  for (const f of BUILTIN_FACES) {
    const buf = await fs.readFile(path.join(dir, `${f.avatar_id}.glb`));
    sizes.set(f.avatar_id, buf.byteLength);
    docs.set(f.avatar_id, await readGlb(new Uint8Array(buf)));
  }
});

function node(doc: Document, name: string): Node {
  const n = doc
    .getRoot()
    .listNodes()
    .find((x) => x.getName() === name);
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

test('every face carries the software-GL light level: fewer triangles over the same vertices, in place', () => {
  for (const [id, doc] of docs) {
    const accessors = doc.getRoot().listAccessors();
    let full = 0;
    let light = 0;
    for (const mesh of doc.getRoot().listMeshes()) {
      for (const prim of mesh.listPrimitives()) {
        const indices = prim.getIndices()!.getArray()!;
        full += indices.length / 3;
        const name = (prim.getExtras() as { lightIndices?: string }).lightIndices;
        if (!name) {
          light += indices.length / 3;
          continue;
        }
        const acc = accessors.find((a) => a.getName() === name);
        assert.ok(acc, `${id} ${mesh.getName()}: accessor ${name}`);
        const li = acc.getArray()!;
        const pos = prim.getAttribute('POSITION')!;
        assert.ok(li.length % 3 === 0 && li.length < indices.length, `${id} ${mesh.getName()}: ${li.length / 3} of ${indices.length / 3} triangles`);
        assert.ok(Math.max(...li) < pos.getCount(), `${id} ${mesh.getName()}: indices within the vertices`);
        // Same vertices, coarser triangles: edges grow a little, never to the size of the mesh
        // (which indices in another vertex order, or read with the wrong stride, would give).
        const el: number[] = [];
        const edge = (idx: ArrayLike<number>) => {
          let sum = 0;
          for (let t = 0; t < idx.length; t += 3) {
            const a = pos.getElement(idx[t], el).slice();
            const b = pos.getElement(idx[t + 1], el);
            sum += Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
          }
          return sum / (idx.length / 3);
        };
        const ratio = edge(li) / edge(indices);
        assert.ok(ratio < 4, `${id} ${mesh.getName()}: mean edge ${ratio.toFixed(2)}× the full level's`);
        light += li.length / 3;
      }
    }
    assert.ok(light < full * 0.35, `${id}: ${light} of ${full} triangles at the light level`);
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

test('the neckline shows the throat: it dips at the front and lies on the neck, not a turtleneck', () => {
  for (const [id, doc] of docs) {
    const shirt = geometry(node(doc, 'Body')).pos;
    const skin = geometry(node(doc, 'Head')).pos;
    const back = Math.max(...shirt.map((p) => p[1]));
    // the collar's front: the highest shirt point on the midline in front of the neck's axis
    const front = shirt.filter((p) => Math.abs(p[0]) < 0.012 && p[2] > -0.03).reduce((a, b) => (b[1] > a[1] ? b : a));
    assert.ok(back - front[1] > 0.025, `${id}: neckline at the front ${front[1].toFixed(3)} m, at the back ${back.toFixed(3)} m`);
    // and it touches the skin there: the throat's front is within 1.5 cm of the collar's edge
    const throat = skin.filter((p) => Math.abs(p[0]) < 0.012 && Math.abs(p[1] - front[1]) < 0.01).reduce((a, b) => (b[2] > a[2] ? b : a));
    const gap = front[2] - throat[2];
    assert.ok(gap > 0 && gap < 0.015, `${id}: collar ${(gap * 100).toFixed(1)} cm in front of the throat`);
  }
});

test("hair edges fade: an alpha-blended copy of only the strands' fading tips over the alpha-tested hair", () => {
  for (const [id, doc] of docs) {
    const style = BUILTIN_FACES.find((f) => f.avatar_id === id)!.look.hairStyle;
    if (style === 'bald') continue;
    const prims = node(doc, 'Hair').getMesh()!.listPrimitives();
    const modes = prims.map((p) => p.getMaterial()!.getAlphaMode());
    assert.ok(modes.includes('MASK'), `${id}: alpha-tested hair`);
    const soft = prims.filter((p) => p.getMaterial()!.getAlphaMode() === 'BLEND');
    assert.equal(soft.length, 1, `${id}: one soft (blended) hair layer`);
    const uv = soft[0].getAttribute('TEXCOORD_0')!;
    const index = soft[0].getIndices()!.getArray()!;
    const tested = prims.filter((p) => p.getMaterial()!.getAlphaMode() === 'MASK').reduce((n, p) => n + p.getIndices()!.getCount() / 3, 0);
    // only where the strand texture fades (v ≥ 0.76): a small share of the hair, not all of it again
    for (let t = 0; t < index.length; t += 3) {
      const v = Math.max(...[0, 1, 2].map((k) => uv.getElement(index[t + k], [])[1]));
      assert.ok(v >= 0.76, `${id}: soft triangle ${t / 3} lies where the strands are opaque (v ${v.toFixed(2)})`);
    }
    assert.ok(index.length / 3 < tested * 0.6, `${id}: ${index.length / 3} soft triangles over ${tested} tested ones`);
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
    for (const [name, sign] of [
      ['eyeBlinkLeft', 1],
      ['eyeBlinkRight', -1],
    ] as const) {
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
    const corner = smile.pos.reduce(
      (best, p, i) => {
        const d = Math.hypot(p[0] - 0.025, p[1] + 0.043, p[2] - 0.043);
        return d < best.d ? { d, i } : best;
      },
      { d: Infinity, i: -1 },
    ).i;
    assert.ok(smile.delta[corner][1] > 0.002, `${id}: smile lifts the corner ${smile.delta[corner][1]}`);
    const rightCorner = smile.pos.reduce(
      (best, p, i) => {
        const d = Math.hypot(p[0] + 0.025, p[1] + 0.043, p[2] - 0.043);
        return d < best.d ? { d, i } : best;
      },
      { d: Infinity, i: -1 },
    ).i;
    assert.ok(Math.abs(smile.delta[rightCorner][1]) < smile.delta[corner][1] / 4, `${id}: mouthSmileLeft is one-sided`);
    const chinish = aa.pos.reduce(
      (best, p, i) => (Math.abs(p[0]) < 0.004 && p[2] > 0.03 && p[1] > -0.12 && (best < 0 || p[1] < aa.pos[best][1]) ? i : best),
      -1,
    );
    // the page adds jawOpen from the loudness on top: the viseme carries a quarter of it
    assert.ok(aa.delta[chinish][1] < -0.004, `${id}: viseme_aa drops the jaw (${aa.delta[chinish][1]})`);
    assert.ok(o.delta[corner][0] < -0.001, `${id}: viseme_O pulls the left corner inwards`);
  }
});

test('eyes are separate nodes centred on their eyeballs, with iris looking forward', () => {
  for (const [id, doc] of docs) {
    for (const [name, sign] of [
      ['EyeLeft', 1],
      ['EyeRight', -1],
    ] as const) {
      const n = node(doc, name);
      const t = n.getWorldMatrix();
      assert.ok(t[12] * sign > 0.01, `${id} ${name} on its side (x=${t[12]})`);
      const { pos } = geometry(n);
      // the node sits on the eyeball's axis, so turning it turns the eye in place: the middle of
      // the sclera's extent across (its cut caps front and back are symmetric about the axis)
      const mid = [0, 1].map((k) => (Math.min(...pos.map((p) => p[k])) + Math.max(...pos.map((p) => p[k]))) / 2);
      assert.ok(Math.hypot(mid[0] - t[12], mid[1] - t[13]) < 0.001, `${id} ${name} centred`);
      const median = pos.map((p) => Math.hypot(p[0] - t[12], p[1] - t[13], p[2] - t[14])).sort((a, b) => a - b)[pos.length >> 1];
      // and the cornea window faces forward: the sclera's missing cap is in front
      const front = Math.max(...pos.map((p) => p[2] - t[14]));
      assert.ok(front < median * 0.95, `${id} ${name}: sclera reaches ${(front * 1000).toFixed(1)} mm forward of the centre (window cut)`);
      assert.notEqual(n.getParentNode()?.getName(), 'Head', 'eyes are not children of the morphing head');
    }
    assert.ok(node(doc, 'Teeth').getMesh());
    assert.ok(node(doc, 'Tongue').getMesh());
    const bald = BUILTIN_FACES.find((f) => f.avatar_id === id)!.look.hairStyle === 'bald';
    assert.equal(
      !!doc
        .getRoot()
        .listNodes()
        .find((x) => x.getName() === 'Hair'),
      !bald,
      `${id}: hair ${bald ? 'absent (bald)' : 'present'}`,
    );
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
  const prim = doc.createPrimitive().setAttribute(
    'POSITION',
    doc
      .createAccessor()
      .setType('VEC3')
      .setArray(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]))
      .setBuffer(buffer),
  );
  doc.createScene().addChild(doc.createNode('Plain').setMesh(doc.createMesh('Plain').addPrimitive(prim)));
  const plain = await new NodeIO().writeBinary(doc);
  const bad = validateFaceGlb(plain);
  assert.equal(bad.ok, false);
  assert.ok(
    bad.problems.some((p) => p.includes('viseme')),
    bad.problems.join('; '),
  );
  assert.deepEqual(bad.morphs, []);
  assert.equal(validateFaceGlb(new TextEncoder().encode('definitely not a glb file')).ok, false);
  const big = validateFaceGlb(new Uint8Array(await fs.readFile(path.join(dir, 'face01.glb'))), 1000);
  assert.equal(big.ok, false, 'size limit enforced');
});

test('the catalogue has at least twelve faces, women and men, each its own identity', () => {
  assert.ok(BUILTIN_FACES.length >= 12, `${BUILTIN_FACES.length} faces`);
  assert.ok(BUILTIN_FACES.filter((f) => f.gender === 'f').length >= 5 && BUILTIN_FACES.filter((f) => f.gender === 'm').length >= 5);
  const seen = new Set<string>();
  for (const f of BUILTIN_FACES) {
    assert.ok(f.look.identity && f.look.identity.length >= 10, `${f.avatar_id} has identity coefficients`);
    const key = JSON.stringify(f.look.identity);
    assert.ok(!seen.has(key), `${f.avatar_id} shares its identity with another face`);
    seen.add(key);
  }
  // descriptions name the decade: twenties to sixties are all there
  for (const decade of ['twenties', 'thirties', 'forties', 'fifties', 'sixties'])
    assert.ok(
      BUILTIN_FACES.some((f) => f.description.includes(decade)),
      decade,
    );
});

test('the faces differ in shape: eye distance, face height and width vary across the catalogue', () => {
  const measures = [...docs].map(([id, doc]) => {
    const l = node(doc, 'EyeLeft').getWorldMatrix();
    const r = node(doc, 'EyeRight').getWorldMatrix();
    const { pos } = geometry(node(doc, 'Head'));
    const face = pos.filter((p) => p[2] > 0.02);
    const width = Math.max(...face.map((p) => p[0])) - Math.min(...face.map((p) => p[0]));
    const chin = Math.min(...face.filter((p) => Math.abs(p[0]) < 0.005 && p[1] > -0.14).map((p) => p[1]));
    return { id, eyes: Math.hypot(l[12] - r[12], l[13] - r[13], l[14] - r[14]), width, height: l[13] - chin };
  });
  for (const key of ['eyes', 'width', 'height'] as const) {
    const v = measures.map((m) => m[key]);
    const spread = Math.max(...v) - Math.min(...v);
    assert.ok(spread > 0.003, `${key} varies by ${(spread * 1000).toFixed(1)} mm across the faces`);
  }
});

test('the viseme mixes: PP keeps the lips shut against the open jaw, O rounds them', () => {
  for (const [id, doc] of docs) {
    const head = node(doc, 'Head');
    const pp = geometry(head, 'viseme_PP');
    const jaw = geometry(head, 'jawOpen');
    // the lower lip's middle: the midline vertex nearest the lips' front below the mouth line
    const lowerLip = pp.pos.reduce(
      (best, p, i) => (Math.abs(p[0]) < 0.002 && p[1] < -0.046 && p[1] > -0.055 && p[2] > (best < 0 ? -1 : pp.pos[best][2]) ? i : best),
      -1,
    );
    assert.ok(lowerLip >= 0, `${id}: lower lip found`);
    // at PP the lower lip rises (mouthClose) against what jawOpen 0.25 takes it down by
    assert.ok(pp.delta[lowerLip][1] > -0.25 * jaw.delta[lowerLip][1] * 0.5, `${id}: PP lifts the lower lip (${pp.delta[lowerLip][1]})`);
  }
});

test('ensureFaces only rebuilds missing or outdated files', async () => {
  const file = path.join(dir, 'face03.glb');
  const before = (await fs.stat(path.join(dir, 'face01.glb'))).mtimeMs;
  await fs.rm(file);
  await ensureFaces(dir);
  assert.ok((await fs.stat(file)).size > 50_000, 'missing face regenerated');
  assert.equal((await fs.stat(path.join(dir, 'face01.glb'))).mtimeMs, before, 'up-to-date face left alone');
});
