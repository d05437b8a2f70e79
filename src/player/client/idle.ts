/**
 * The living idle: breathing, small head motion (smooth noise), eye saccades around eye contact,
 * speech-driven head nods and brow raises on emphasis, and the listening look (attentive eyes,
 * a slight tilt, small nods, mouth closed). Outputs a head pose, a gaze offset and idle morphs.
 */
import type { PlayerState } from './protocol.js';

const DEG = Math.PI / 180;
const rand = (a: number, b: number) => a + Math.random() * (b - a);

/** Smooth 1-D noise: a sum of incommensurate sines with random phases. */
class Noise {
  private readonly p = [Math.random() * 100, Math.random() * 100, Math.random() * 100];
  constructor(private readonly f: number) {}
  at(t: number): number {
    const f = this.f;
    return (
      (Math.sin(t * f * 6.283 + this.p[0]) * 0.55 + Math.sin(t * f * 2.71 * 6.283 + this.p[1]) * 0.3 + Math.sin(t * f * 0.43 * 6.283 + this.p[2]) * 0.35) / 1.2
    );
  }
}

/** Critically damped spring towards a target. */
class Spring {
  x = 0;
  v = 0;
  constructor(private readonly w: number) {}
  /** Exact solution over dt (stable for any frame time). */
  step(target: number, dt: number): number {
    const w = this.w;
    const x0 = this.x - target;
    const c = this.v + w * x0;
    const e = Math.exp(-w * dt);
    this.x = target + (x0 + c * dt) * e;
    this.v = (this.v - w * c * dt) * e;
    return this.x;
  }
}

export interface IdlePose {
  /** Head rotation (radians) and vertical offset (fraction of head height). */
  pitch: number;
  yaw: number;
  roll: number;
  rise: number;
  /** Gaze offset from eye contact (radians; + yaw = subject's left, + pitch = up). */
  gazeYaw: number;
  gazePitch: number;
}

export class Idle {
  private readonly nYaw = new Noise(0.09);
  private readonly nPitch = new Noise(0.11);
  private readonly nRoll = new Noise(0.07);
  private readonly nBrow = new Noise(0.05);
  private readonly tilt = new Spring(2.5);
  private readonly nod = new Spring(9);
  private readonly brow = new Spring(7);
  private readonly gazeY = new Spring(38);
  private readonly gazeP = new Spring(38);
  private readonly energy = new Spring(3);
  private nodTarget = 0;
  private nodUntil = 0;
  private nextNod = 2;
  private nextSaccade = 0.5;
  private saccadeYaw = 0;
  private saccadePitch = 0;
  private lookAwayUntil = 0;
  private lastOpen = 0;
  private peak = 0;
  private browUntil = 0;
  /** Set when a large saccade happened this frame (blinks often accompany them). */
  bigSaccade = false;

  readonly pose: IdlePose = { pitch: 0, yaw: 0, roll: 0, rise: 0, gazeYaw: 0, gazePitch: 0 };

  /**
   * @param t seconds (monotonic), @param dt frame seconds, @param open speech openness 0..1,
   * @param thinking an expression asks for an inward look (gaze up and aside)
   */
  update(t: number, dt: number, state: PlayerState, open: number, morphs: Map<string, number>, thinking = false): IdlePose {
    dt = Math.min(dt, 0.1);
    const talking = state === 'talking' || open > 0.05;
    const listening = state === 'listening' && !talking;
    const energy = this.energy.step(talking ? 1 : 0, dt);

    // Emphasis: a sharp rise of the loudness envelope above the running peak.
    this.peak = Math.max(this.peak * Math.exp(-dt / 1.5), open);
    const rising = (open - this.lastOpen) / Math.max(dt, 1e-3);
    this.lastOpen = open;
    if (talking && open > 0.55 && open >= this.peak * 0.92 && rising > 2.5 && t > this.nodUntil + 0.35) {
      this.nodTarget = rand(1.6, 3.2) * DEG;
      this.nodUntil = t + rand(0.16, 0.26);
      if (Math.random() < 0.6) this.browUntil = t + rand(0.25, 0.5);
    }
    // Listening: small slow nods now and then.
    if (listening && t > this.nextNod) {
      this.nodTarget = rand(2, 3.5) * DEG;
      this.nodUntil = t + rand(0.25, 0.4);
      this.nextNod = t + rand(2.5, 6);
    }
    const nod = this.nod.step(t < this.nodUntil ? this.nodTarget : 0, dt);
    const tilt = this.tilt.step(listening ? 4.5 * DEG : 0, dt);

    // Saccades around eye contact.
    this.bigSaccade = false;
    if (t > this.nextSaccade) {
      const lookAway = !listening && Math.random() < (talking ? 0.22 : 0.3);
      if (lookAway || thinking) {
        const side = Math.random() < 0.5 ? -1 : 1;
        this.saccadeYaw = side * rand(5, 11) * DEG;
        this.saccadePitch = (thinking ? rand(5, 9) : rand(-4, 5)) * DEG;
        this.lookAwayUntil = t + rand(0.4, 1.2);
        this.bigSaccade = true;
      } else {
        const m = listening ? 0.7 : 1.3;
        this.saccadeYaw = rand(-m, m) * DEG;
        this.saccadePitch = rand(-m, m) * 0.6 * DEG;
      }
      this.nextSaccade = t + (listening ? rand(1.2, 3.5) : rand(0.6, 2.8));
    }
    if (this.lookAwayUntil && t > this.lookAwayUntil) {
      this.lookAwayUntil = 0;
      this.saccadeYaw *= 0.05;
      this.saccadePitch *= 0.05;
      this.bigSaccade = true;
    }
    const gy = this.gazeY.step(this.saccadeYaw, dt);
    const gp = this.gazeP.step(this.saccadePitch, dt);

    // Head: slow noise, livelier while talking; follows a look-away a little; breathing.
    const amp = 1 + 0.7 * energy - (listening ? 0.35 : 0);
    const breath = Math.sin((t * 2 * Math.PI) / 4.3);
    const p = this.pose;
    p.yaw = this.nYaw.at(t) * 2.4 * DEG * amp + gy * 0.25;
    p.pitch = this.nPitch.at(t) * 1.3 * DEG * amp + nod + breath * 0.25 * DEG - gp * 0.2;
    p.roll = this.nRoll.at(t) * 1.1 * DEG * amp + tilt;
    p.rise = breath * 0.0035;
    p.gazeYaw = gy;
    p.gazePitch = gp;

    // Idle morphs: soft brow life, emphasis brow raises, the attentive listening look.
    morphs.clear();
    const browRaise = this.brow.step(t < this.browUntil ? 0.35 : 0, dt);
    const browIdle = Math.max(0, this.nBrow.at(t)) * 0.08;
    morphs.set('browInnerUp', browIdle + browRaise * 0.8 + (listening ? 0.14 : 0));
    morphs.set('browOuterUpLeft', browRaise * 0.6);
    morphs.set('browOuterUpRight', browRaise * 0.6);
    morphs.set('mouthSmileLeft', listening ? 0.12 : 0.05);
    morphs.set('mouthSmileRight', listening ? 0.12 : 0.05);
    if (listening) {
      morphs.set('eyeWideLeft', 0.08);
      morphs.set('eyeWideRight', 0.08);
      // Lips together while listening.
      morphs.set('mouthPressLeft', 0.1);
      morphs.set('mouthPressRight', 0.1);
      morphs.set('mouthClose', 0.35);
    }
    // Eyelids follow vertical gaze a little (looking down lowers the lids).
    const lid = Math.max(0, -gp / (10 * DEG)) * 0.25;
    morphs.set('eyeBlinkLeft', lid);
    morphs.set('eyeBlinkRight', lid);
    return p;
  }
}
