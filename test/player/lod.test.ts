/**
 * The software-GL level of detail (src/faces/lod.ts) on a three.js mesh without a browser:
 * fewer triangles, the same vertices and morph targets, and the parts a talking morph moves kept
 * denser than the parts that stay still.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BufferAttribute, InterleavedBuffer, InterleavedBufferAttribute, Mesh, MeshStandardMaterial, SphereGeometry, Vector3 } from 'three';
import { readXyz } from '../../src/faces/attributes.js';
import { compactVertices, simplifyMeshes } from '../../src/faces/lod.js';

/**
 * A dense sphere whose lower front moves down with `jawOpen` while the rest stays: a stand-in for
 * a chin and lower lip.
 */
function headLike(): Mesh {
  const g = new SphereGeometry(1, 96, 64);
  const pos = g.attributes.position;
  const delta = new Float32Array(pos.count * 3);
  for (let v = 0; v < pos.count; v++) if (pos.getZ(v) > 0.3 && pos.getY(v) < -0.2) delta[v * 3 + 1] = -0.15;
  g.morphAttributes.position = [new BufferAttribute(delta, 3)];
  g.morphTargetsRelative = true;
  const mesh = new Mesh(g, new MeshStandardMaterial());
  mesh.name = 'Head';
  mesh.updateMorphTargets();
  mesh.morphTargetDictionary = { jawOpen: 0 };
  return mesh;
}

/**
 * Surface area of the triangles that join a moving vertex to a still one: these stretch when the
 * jaw opens. A simplifier blind to the morph lets them grow large (a smeared chin).
 */
function stretchedArea(mesh: Mesh, morph: BufferAttribute): number {
  const pos = mesh.geometry.attributes.position;
  const index = mesh.geometry.index!.array as ArrayLike<number>;
  const moves = (v: number) => morph.getY(v) !== 0;
  const p = (v: number) => new Vector3(pos.getX(v), pos.getY(v), pos.getZ(v));
  let area = 0;
  for (let t = 0; t < index.length; t += 3) {
    const [a, b, c] = [index[t], index[t + 1], index[t + 2]];
    const n = Number(moves(a)) + Number(moves(b)) + Number(moves(c));
    if (n === 0 || n === 3) continue;
    area +=
      p(b)
        .sub(p(a))
        .cross(p(c).sub(p(a)))
        .length() / 2;
  }
  return area;
}

const referenced = (mesh: Mesh) => new Set(Array.from(mesh.geometry.index!.array as ArrayLike<number>));

describe('software-GL level of detail', () => {
  test('cuts the triangles, keeps every vertex and morph target, indices stay valid', async () => {
    const mesh = headLike();
    const g = mesh.geometry;
    const before = g.index!.count / 3;
    const vertices = g.attributes.position.count;
    const morph = g.morphAttributes.position![0];
    const report = await simplifyMeshes([mesh], { ratio: 0.2, error: 0.01, maxPartError: 0.01, minTriangles: 200, motionWeight: 1 });
    const after = g.index!.count / 3;
    assert.deepEqual(report, [{ mesh: 'Head', before, after }]);
    assert.ok(after <= before * 0.35, `${before} → ${after} triangles`);
    assert.equal(g.attributes.position.count, vertices, 'vertex buffer untouched');
    assert.equal(g.morphAttributes.position![0], morph, 'morph target untouched');
    for (const i of referenced(mesh)) assert.ok(i >= 0 && i < vertices);
  });

  test('the seam between moving and still parts stays tight: the morph weighs in the error', async () => {
    const mesh = headLike();
    const morph = mesh.geometry.morphAttributes.position![0] as BufferAttribute;
    const original = stretchedArea(mesh, morph);
    // The same sphere simplified without the morph: the difference is the morph's weight.
    const blind = headLike();
    blind.geometry.morphAttributes = {};
    blind.morphTargetDictionary = {};
    const options = { ratio: 0.2, error: 0.01, maxPartError: 0.01, minTriangles: 200, motionWeight: 1 };
    await simplifyMeshes([mesh], options);
    await simplifyMeshes([blind], options);
    const guarded = stretchedArea(mesh, morph);
    const unguarded = stretchedArea(blind, morph);
    assert.ok(guarded < unguarded * 0.6, `stretching area: original ${original.toFixed(3)}, guarded ${guarded.toFixed(3)}, blind ${unguarded.toFixed(3)}`);
  });

  test('small meshes and meshes without an index are left alone', async () => {
    const small = new Mesh(new SphereGeometry(1, 8, 6), new MeshStandardMaterial());
    const unindexed = new Mesh(new SphereGeometry(1, 64, 48).toNonIndexed(), new MeshStandardMaterial());
    const smallIndex = small.geometry.index;
    const report = await simplifyMeshes([small, unindexed], { ratio: 0.2, error: 0.01, maxPartError: 0.01, minTriangles: 200, motionWeight: 1 });
    assert.deepEqual(report, []);
    assert.equal(small.geometry.index, smallIndex);
    assert.equal(unindexed.geometry.index, null);
  });

  test('readXyz reads quantised, plain, padded and interleaved attributes as three.js decodes them', () => {
    const cases = [
      new BufferAttribute(new Int16Array([32767, -32768, 100, 5, 6, 7]), 3, true),
      new BufferAttribute(new Uint16Array([65535, 0, 3, 4, 5, 6]), 3, true),
      new BufferAttribute(new Int8Array([127, -128, 1, 0, 2, 3]), 3, true),
      new BufferAttribute(new Float32Array([1.5, 2, 3, 4, 5, 6]), 3),
      new BufferAttribute(new Int16Array([1, 2, 3, 4, 5, 6]), 3, false),
      new BufferAttribute(new Int16Array([1, 2, 3, 9, 4, 5, 6, 9]), 4, true),
      new InterleavedBufferAttribute(new InterleavedBuffer(new Float32Array([1, 2, 3, 0, 4, 5, 6, 0]), 4), 3, 0),
    ];
    for (const attr of cases) {
      const expected: number[] = [];
      for (let i = 0; i < attr.count; i++) expected.push(attr.getX(i), attr.getY(i), attr.getZ(i));
      const got = Array.from(readXyz(attr));
      assert.equal(got.length, expected.length);
      got.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-6, `${attr.array.constructor.name}: ${got} vs ${expected}`));
    }
  });

  test('compactVertices keeps only the vertices the triangles use: same triangles, morphs and bounds', async () => {
    const mesh = headLike();
    await simplifyMeshes([mesh], { ratio: 0.2, error: 0.01, maxPartError: 0.01, minTriangles: 200, motionWeight: 1 });
    const g = mesh.geometry;
    const corners = (attr: BufferAttribute | import('three').InterleavedBufferAttribute) =>
      Array.from(g.index!.array as ArrayLike<number>).flatMap((v) => [attr.getX(v), attr.getY(v), attr.getZ(v)]);
    const before = {
      pos: corners(g.attributes.position),
      uv: Array.from(g.index!.array as ArrayLike<number>).map((v) => g.attributes.uv.getX(v)),
      morph: corners(g.morphAttributes.position![0]),
      count: g.attributes.position.count,
    };
    g.computeBoundingBox();
    const box = g.boundingBox!.clone();
    compactVertices(mesh);
    assert.ok(g.attributes.position.count < before.count * 0.5, `${before.count} → ${g.attributes.position.count} vertices`);
    assert.deepEqual(new Set(Array.from(g.index!.array as ArrayLike<number>)).size, g.attributes.position.count, 'every kept vertex is used');
    const close = (a: number[], b: number[]) => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) < 1e-6);
    assert.ok(close(corners(g.attributes.position), before.pos), 'triangle corners in place');
    assert.ok(
      close(
        Array.from(g.index!.array as ArrayLike<number>).map((v) => g.attributes.uv.getX(v)),
        before.uv,
      ),
      'UVs follow',
    );
    assert.ok(close(corners(g.morphAttributes.position![0]), before.morph), 'morph deltas follow');
    assert.ok(g.boundingBox!.equals(box), 'bounds of the full vertex set');
  });
});
