/**
 * Morph target mixing. Each animation source writes its wishes into its own layer; the mixer
 * composes them by rank (base < idle < expression < speech < blink), smooths each morph with its
 * own speed, and writes the result into every mesh that has a morph of that name.
 */
import type { Mesh } from 'three';

export type Layer = 'base' | 'idle' | 'expression' | 'listening' | 'speech' | 'blink';
const LAYERS: Layer[] = ['base', 'idle', 'expression', 'listening', 'speech', 'blink'];

export const isMouth = (name: string) =>
  name.startsWith('viseme_') || name.startsWith('mouth') || name.startsWith('jaw') || name.startsWith('tongue') || name.startsWith('cheekPuff');
const isBlink = (name: string) => name === 'eyeBlinkLeft' || name === 'eyeBlinkRight';

/** Smoothing time constants (seconds) by morph family; 0 = follow the target exactly. */
function tau(name: string, speaking: boolean): number {
  if (isBlink(name)) return 0;
  if (isMouth(name)) return speaking ? 0.012 : 0.05;
  if (name.startsWith('eyeLook')) return 0.02;
  return 0.12;
}

interface Binding {
  mesh: Mesh;
  index: number;
}

export class MorphMixer {
  private readonly layers = new Map<Layer, Map<string, number>>(LAYERS.map((l) => [l, new Map()]));
  private readonly current = new Map<string, number>();
  private readonly bindings = new Map<string, Binding[]>();
  /** 0..1: how much the speech layer owns the mouth. */
  speechAmount = 0;

  bind(meshes: Mesh[]): void {
    this.bindings.clear();
    for (const mesh of meshes) {
      const dict = mesh.morphTargetDictionary;
      if (!dict) continue;
      for (const [name, index] of Object.entries(dict)) {
        const list = this.bindings.get(name) ?? [];
        list.push({ mesh, index });
        this.bindings.set(name, list);
        if (!this.current.has(name)) this.current.set(name, 0);
      }
    }
  }

  has(name: string): boolean {
    return this.bindings.has(name);
  }

  names(): string[] {
    return [...this.bindings.keys()];
  }

  layer(layer: Layer): Map<string, number> {
    return this.layers.get(layer)!;
  }

  /** Composes the layers into one target per morph. */
  private targets(): Map<string, number> {
    const out = new Map<string, number>();
    const add = (layer: Layer, scale = 1) => {
      for (const [k, v] of this.layers.get(layer)!) out.set(k, (out.get(k) ?? 0) + v * scale);
    };
    add('base');
    add('idle');
    add('expression');
    add('listening');
    const s = this.speechAmount;
    if (s > 0) {
      // Speech owns the mouth: other layers' mouth shapes are damped while it talks.
      // Mouth corners (smile, frown, dimples) carry the emotion through speech: damped less.
      for (const [k, v] of out) if (isMouth(k)) out.set(k, v * (1 - (/^mouth(Smile|Frown|Dimple)/.test(k) ? 0.25 : 0.55) * s));
    }
    for (const [k, v] of this.layers.get('speech')!) out.set(k, (out.get(k) ?? 0) + v);
    for (const [k, v] of this.layers.get('blink')!) {
      const base = out.get(k) ?? 0;
      out.set(k, base + (1 - base) * v);
    }
    for (const [k, v] of out) out.set(k, Math.min(1, Math.max(0, v)));
    return out;
  }

  /** Advances smoothing by dt seconds and writes the influences (`fastMouth`: closing after an interrupt). */
  update(dt: number, fastMouth = false): void {
    const targets = this.targets();
    const speaking = this.speechAmount > 0.05;
    for (const name of this.bindings.keys()) {
      const target = targets.get(name) ?? 0;
      const cur = this.current.get(name) ?? 0;
      const k = tau(name, speaking);
      let next: number;
      const kk = fastMouth && isMouth(name) ? Math.min(k, 0.02) : k;
      if (kk === 0) next = target;
      else next = cur + (target - cur) * (1 - Math.exp(-dt / kk));
      if (Math.abs(next) < 1e-4) next = 0;
      this.current.set(name, next);
      for (const b of this.bindings.get(name)!) {
        const inf = b.mesh.morphTargetInfluences;
        if (inf) inf[b.index] = next;
      }
    }
  }

  value(name: string): number {
    return this.current.get(name) ?? 0;
  }

  snapshot(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, v] of this.current) out[k] = Math.round(v * 1000) / 1000;
    return out;
  }
}
