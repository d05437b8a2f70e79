/**
 * Morph targets blended on the CPU, for software GL. three.js's morph shader loops over every
 * target per vertex (67 on a face) even when few are active, which a software rasteriser pays for
 * on the main thread's frame budget; here only the active targets are summed, in JavaScript, and
 * the result uploaded as plain positions and normals.
 */
import { BufferAttribute, DynamicDrawUsage, type BufferGeometry, type Mesh } from 'three';
import { readXyz } from '../../faces/attributes.js';

interface Target {
  index: number;
  pos: Float32Array;
  nor: Float32Array | null;
}

class CpuMorphMesh {
  private readonly basePos: Float32Array;
  private readonly baseNor: Float32Array | null;
  private readonly pos: BufferAttribute;
  private readonly nor: BufferAttribute | null;
  private readonly targets: Target[];
  private readonly last: Float32Array;
  private readonly relative: boolean;

  constructor(private readonly mesh: Mesh) {
    const g = mesh.geometry as BufferGeometry;
    this.relative = g.morphTargetsRelative;
    this.basePos = readXyz(g.attributes.position);
    this.baseNor = g.attributes.normal ? readXyz(g.attributes.normal) : null;
    const mp = g.morphAttributes.position ?? [];
    const mn = g.morphAttributes.normal ?? [];
    this.targets = mp.map((a, index) => ({ index, pos: readXyz(a), nor: mn[index] ? readXyz(mn[index]) : null }));
    this.pos = new BufferAttribute(this.basePos.slice(), 3).setUsage(DynamicDrawUsage);
    this.nor = this.baseNor ? new BufferAttribute(this.baseNor.slice(), 3).setUsage(DynamicDrawUsage) : null;
    g.setAttribute('position', this.pos);
    if (this.nor) g.setAttribute('normal', this.nor);
    // Without morph attributes three.js compiles the plain (cheap) vertex shader.
    g.morphAttributes = {};
    this.last = new Float32Array(this.targets.length).fill(-1);
  }

  update(): void {
    const w = this.mesh.morphTargetInfluences;
    if (!w) return;
    let changed = false;
    for (let k = 0; k < this.targets.length; k++) if (Math.abs(w[k] - this.last[k]) > 1e-4) changed = true;
    if (!changed) return;
    const p = this.pos.array as Float32Array;
    p.set(this.basePos);
    const n = this.nor ? (this.nor.array as Float32Array) : null;
    if (n && this.baseNor) n.set(this.baseNor);
    for (const t of this.targets) {
      const weight = w[t.index] ?? 0;
      this.last[t.index] = weight;
      if (weight === 0) continue;
      const tp = t.pos;
      if (this.relative) for (let i = 0; i < p.length; i++) p[i] += tp[i] * weight;
      else for (let i = 0; i < p.length; i++) p[i] += (tp[i] - this.basePos[i]) * weight;
      if (n && t.nor && this.baseNor) {
        const tn = t.nor;
        if (this.relative) for (let i = 0; i < n.length; i++) n[i] += tn[i] * weight;
        else for (let i = 0; i < n.length; i++) n[i] += (tn[i] - this.baseNor[i]) * weight;
      }
    }
    this.pos.needsUpdate = true;
    if (this.nor) this.nor.needsUpdate = true;
  }
}

export class CpuMorpher {
  private readonly meshes: CpuMorphMesh[] = [];

  constructor(meshes: Mesh[]) {
    for (const m of meshes) {
      const g = m.geometry as BufferGeometry;
      if (g.morphAttributes.position?.length && m.morphTargetInfluences) this.meshes.push(new CpuMorphMesh(m));
    }
  }

  update(): void {
    for (const m of this.meshes) m.update();
  }
}
