/**
 * Loop subdivision expressed as a sparse linear operator. The canonical face has only ~900
 * triangles, which shades faceted at portrait size; one or two Loop steps make it smooth. Because
 * the operator is linear we apply the same weights to positions, UVs, colours and every morph
 * target delta, so shape keys subdivide exactly along with the rest pose.
 * Open boundaries (neck end, ear edges) use the standard boundary-curve rules.
 */
export interface SubdivOp {
  /** For each output vertex: source vertex indices and weights. */
  rows: { src: number[]; w: number[] }[];
  indices: number[];
}

export function loopSubdivide(vertexCount: number, indices: number[]): SubdivOp {
  const edgeKey = (a: number, b: number) => (a < b ? a * 1048576 + b : b * 1048576 + a);
  const edges = new Map<number, { a: number; b: number; opp: number[]; id: number }>();
  const nbrs: Set<number>[] = Array.from({ length: vertexCount }, () => new Set<number>());
  for (let t = 0; t < indices.length; t += 3) {
    for (let e = 0; e < 3; e++) {
      const a = indices[t + e];
      const b = indices[t + ((e + 1) % 3)];
      const c = indices[t + ((e + 2) % 3)];
      const k = edgeKey(a, b);
      let rec = edges.get(k);
      if (!rec) edges.set(k, (rec = { a, b, opp: [], id: -1 }));
      rec.opp.push(c);
      nbrs[a].add(b);
      nbrs[b].add(a);
    }
  }
  const boundaryNbrs: number[][] = Array.from({ length: vertexCount }, () => []);
  for (const e of edges.values()) {
    if (e.opp.length === 1) {
      boundaryNbrs[e.a].push(e.b);
      boundaryNbrs[e.b].push(e.a);
    }
  }
  const rows: SubdivOp['rows'] = [];
  for (let v = 0; v < vertexCount; v++) {
    const n = [...nbrs[v]];
    const bn = boundaryNbrs[v];
    if (n.length === 0) rows.push({ src: [v], w: [1] });
    else if (bn.length === 2) rows.push({ src: [v, bn[0], bn[1]], w: [0.75, 0.125, 0.125] });
    else if (bn.length > 0) rows.push({ src: [v], w: [1] }); // non-manifold corner: keep it pinned
    else {
      const k = n.length;
      const beta = k === 3 ? 3 / 16 : 3 / (8 * k);
      rows.push({ src: [v, ...n], w: [1 - k * beta, ...n.map(() => beta)] });
    }
  }
  for (const e of edges.values()) {
    e.id = rows.length;
    if (e.opp.length === 2) rows.push({ src: [e.a, e.b, e.opp[0], e.opp[1]], w: [0.375, 0.375, 0.125, 0.125] });
    else rows.push({ src: [e.a, e.b], w: [0.5, 0.5] });
  }
  const out: number[] = [];
  for (let t = 0; t < indices.length; t += 3) {
    const [a, b, c] = [indices[t], indices[t + 1], indices[t + 2]];
    const ab = edges.get(edgeKey(a, b))!.id;
    const bc = edges.get(edgeKey(b, c))!.id;
    const ca = edges.get(edgeKey(c, a))!.id;
    out.push(a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca);
  }
  return { rows, indices: out };
}

/** Applies a subdivision operator to a flat attribute array with `size` components per vertex. */
export function applySubdiv(op: SubdivOp, data: ArrayLike<number>, size: number): Float32Array {
  const out = new Float32Array(op.rows.length * size);
  op.rows.forEach((row, i) => {
    for (let k = 0; k < row.src.length; k++) {
      const s = row.src[k] * size;
      const w = row.w[k];
      for (let c = 0; c < size; c++) out[i * size + c] += data[s + c] * w;
    }
  });
  return out;
}
