/**
 * The camera rig: three shots (far, mid, close) framed from the face's own measurements, eased
 * moves or cuts between them, a barely-there handheld drift, and the `auto` director, which picks
 * shots from the speech: closer on emphasis (loudness peaks ahead in the track), wider between
 * utterances; `hold` keeps the current shot.
 */
import { PerspectiveCamera, Vector3 } from 'three';
import type { CameraName, CameraShot } from './protocol.js';

export interface Framing {
  /** Midpoint between the eyes. */
  eyes: Vector3;
  /** Chin to crown, model units. */
  headHeight: number;
  headWidth: number;
  /** Lowest point of the model (the bust's cut): no shot may show below it. */
  bottom: number;
}

export interface DirectorInput {
  talking: boolean;
  listening: boolean;
  /** Mean speech openness over the next ~1.2 s and the utterance's running peak. */
  ahead: number;
  peak: number;
  /** Seconds since speech last stopped (0 while talking). */
  silence: number;
}

const SHOTS: CameraShot[] = ['far', 'mid', 'close'];
/** Framed height in head heights, and where the eyes sit (fraction from the top of the frame). */
const SHOT_SPEC: Record<CameraShot, { height: number; eyes: number; width: number }> = {
  close: { height: 1.28, eyes: 0.43, width: 1.3 },
  mid: { height: 2.05, eyes: 0.38, width: 1.9 },
  far: { height: 2.75, eyes: 0.35, width: 2.6 },
};
const FOV = 26;
const rand = (a: number, b: number) => a + Math.random() * (b - a);
const ease = (x: number) => (x >= 1 ? 1 : x <= 0 ? 0 : x < 0.5 ? 4 * x * x * x : 1 - (-2 * x + 2) ** 3 / 2);

interface Pose {
  pos: Vector3;
  target: Vector3;
}

export class CameraRig {
  readonly camera = new PerspectiveCamera(FOV, 16 / 9, 0.01, 100);
  allowed: CameraShot[] = ['far', 'mid', 'close'];
  shot: CameraShot = 'mid';
  mode: 'auto' | 'manual' = 'auto';
  hold = false;
  cuts = 0;
  private framing: Framing = { eyes: new Vector3(0, 1.6, 0), headHeight: 0.25, headWidth: 0.17, bottom: 0 };
  private aspect = 16 / 9;
  private from: Pose | null = null;
  private moveStart = 0;
  private moveDuration = 0;
  private side = 0;
  private shotSince = 0;
  private minHold = 4;
  private readonly current: Pose = { pos: new Vector3(), target: new Vector3() };
  private seed = Math.random() * 100;
  /** Fired on a cut (the face may blink, as people do when the view jumps). */
  onCut: () => void = () => {};

  setFraming(f: Framing): void {
    this.framing = f;
    this.snap();
  }

  setAspect(aspect: number): void {
    this.aspect = aspect;
    this.camera.aspect = aspect;
    this.camera.updateProjectionMatrix();
    if (!this.from) this.snap();
  }

  setAllowed(list: CameraShot[]): void {
    const ok = list.filter((s) => SHOTS.includes(s));
    this.allowed = ok.length ? ok : ['mid'];
    if (!this.allowed.includes(this.shot)) (this.shot = this.nearest(this.shot)), this.snap();
  }

  /** The allowed shot nearest to `want`. */
  nearest(want: CameraShot): CameraShot {
    if (this.allowed.includes(want)) return want;
    const i = SHOTS.indexOf(want);
    return [...this.allowed].sort((a, b) => Math.abs(SHOTS.indexOf(a) - i) - Math.abs(SHOTS.indexOf(b) - i))[0];
  }

  /** A `camera` message (or hello's studio camera). */
  request(name: CameraName, hold: boolean | undefined, now: number, transition?: 'cut' | 'move'): void {
    this.hold = !!hold;
    if (name === 'auto') {
      this.mode = 'auto';
      return;
    }
    this.mode = 'manual';
    const shot = this.nearest(name);
    if (shot === this.shot) return;
    const jump = Math.abs(SHOTS.indexOf(shot) - SHOTS.indexOf(this.shot));
    if (transition === 'cut' || (transition !== 'move' && jump > 1)) this.cut(shot, now);
    else this.move(shot, now, 1.1);
  }

  /** Initial placement, no transition. */
  place(name: CameraName, now: number, startShot?: CameraShot): void {
    if (name !== 'auto') (this.shot = this.nearest(name)), (this.mode = 'manual');
    else (this.mode = 'auto'), (this.shot = this.nearest(startShot ?? 'mid'));
    this.shotSince = now;
    this.snap();
  }

  cut(shot: CameraShot, now: number): void {
    this.shot = shot;
    this.side = shot === 'close' ? rand(-0.03, 0.03) : rand(-0.09, 0.09);
    this.from = null;
    this.shotSince = now;
    this.minHold = rand(3.5, 6.5);
    this.cuts++;
    this.snap();
    this.onCut();
  }

  move(shot: CameraShot, now: number, duration: number): void {
    this.from = { pos: this.current.pos.clone(), target: this.current.target.clone() };
    this.shot = shot;
    this.moveStart = now;
    this.moveDuration = duration;
    this.shotSince = now;
    this.minHold = rand(3.5, 6.5) + duration;
  }

  private pose(shot: CameraShot, out: Pose): Pose {
    const f = this.framing;
    const spec = SHOT_SPEC[shot];
    let height = spec.height * f.headHeight;
    // Narrow (portrait) frames: widen until the head and some shoulder room fit.
    const needWidth = spec.width * f.headWidth;
    if (height * this.aspect < needWidth) height = needWidth / this.aspect;
    // Never show the bottom edge of the bust: cap the height, then keep the frame's bottom above it.
    const margin = f.headHeight * 0.15;
    const room = f.eyes.y - f.bottom - margin;
    height = Math.min(height, Math.max(f.headHeight * 1.1, room / (1 - spec.eyes)));
    const dist = height / 2 / Math.tan((FOV * Math.PI) / 360);
    let targetY = f.eyes.y - height * (0.5 - spec.eyes);
    targetY = Math.max(targetY, f.bottom + margin + height / 2);
    out.target.set(f.eyes.x, targetY, f.eyes.z);
    // Slightly above eye level, a touch off-axis for variety.
    out.pos.set(f.eyes.x + Math.sin(this.side) * dist, targetY + height * 0.04, f.eyes.z + Math.cos(this.side) * dist);
    return out;
  }

  private snap(): void {
    this.pose(this.shot, this.current);
    this.from = null;
    this.apply(0);
  }

  private apply(t: number): void {
    const c = this.camera;
    // Handheld drift: a fraction of a percent of the framed height.
    const h = this.framing.headHeight;
    const s = this.seed;
    const dx = (Math.sin(t * 0.31 + s) + Math.sin(t * 0.17 + 2 * s) * 0.6) * h * 0.004;
    const dy = (Math.sin(t * 0.23 + 3 * s) + Math.sin(t * 0.41 + s) * 0.5) * h * 0.003;
    c.position.set(this.current.pos.x + dx, this.current.pos.y + dy, this.current.pos.z);
    c.lookAt(this.current.target.x + dx * 0.5, this.current.target.y + dy * 0.5, this.current.target.z);
  }

  /** Advances moves and, in auto mode, directs. `now` in seconds (monotonic). */
  update(now: number, input: DirectorInput): void {
    if (this.mode === 'auto' && !this.hold) this.direct(now, input);
    const goal = this.pose(this.shot, { pos: new Vector3(), target: new Vector3() });
    if (this.from) {
      const x = ease((now - this.moveStart) / this.moveDuration);
      this.current.pos.lerpVectors(this.from.pos, goal.pos, x);
      this.current.target.lerpVectors(this.from.target, goal.target, x);
      if (x >= 1) this.from = null;
    } else {
      this.current.pos.copy(goal.pos);
      this.current.target.copy(goal.target);
    }
    this.apply(now);
  }

  private direct(now: number, d: DirectorInput): void {
    if (this.allowed.length < 2 || this.from) return;
    const held = now - this.shotSince;
    if (held < this.minHold) return;
    const idx = SHOTS.indexOf(this.shot);
    const has = (s: CameraShot) => this.allowed.includes(s);
    if (d.talking) {
      const emphasis = d.peak > 0.2 && d.ahead > 0.62 * d.peak;
      if (emphasis && idx < 2) {
        // Go in on emphasis: a cut, or a slow push-in.
        const target = has('close') ? 'close' : this.nearest(SHOTS[idx + 1]);
        if (target === this.shot) return;
        if (Math.random() < 0.65) this.cut(target, now);
        else this.move(target, now, rand(1.6, 2.4));
      } else if (idx === 2 && held > this.minHold + 3) {
        const target = has('mid') ? 'mid' : this.nearest('far');
        if (target !== this.shot) this.cut(target, now);
      } else if (held > 12 && Math.random() < 0.01) {
        const others = this.allowed.filter((s) => s !== this.shot);
        this.cut(others[Math.floor(Math.random() * others.length)], now);
      }
    } else if (d.silence > 1.2 && idx === 2) {
      // Between utterances: ease back out.
      const target = d.listening && has('mid') ? 'mid' : has('mid') ? 'mid' : this.nearest('far');
      if (target !== this.shot) this.move(target, now, rand(1.8, 2.6));
    } else if (d.silence > 6 && !d.listening && idx === 1 && has('far') && Math.random() < 0.004) {
      this.move('far', now, rand(2.5, 3.5));
    }
  }
}
