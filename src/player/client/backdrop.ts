/**
 * The studio backdrop, painted procedurally from the catalog record (colors, kind, blur) on a 2D
 * canvas: a gradient sweep with a soft glow, a defocused room (window, shelves, lamps, plants) or
 * city/library bokeh. No external images. Blur is a progressive down/up-sampling (works in every
 * browser, unlike canvas filters). It stands on a plane behind the head, so camera moves get
 * parallax, but it is not drawn by WebGL: the painted canvas is an element under the (transparent)
 * WebGL canvas, and a CSS transform puts it where the plane projects. The browser's compositor
 * shows it, so a software rasteriser never shades its pixels (docs/player.md, "Software GL").
 */
import { Vector3, type Camera } from 'three';
import type { BackdropRecord } from './protocol.js';

const W = 1536;
const H = 768;

type Ctx = CanvasRenderingContext2D;

function rng(seed: string): () => number {
  let h = 2166136261;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619);
  return () => {
    h += 0x6d2b79f5;
    let t = h;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function rgb(hex: string): [number, number, number] {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex.trim());
  const n = m ? parseInt(m[1], 16) : 0x808080;
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}
const css = (c: [number, number, number], a = 1) => `rgba(${c[0] | 0},${c[1] | 0},${c[2] | 0},${a})`;
const mix = (a: [number, number, number], b: [number, number, number], t: number): [number, number, number] => [
  a[0] + (b[0] - a[0]) * t,
  a[1] + (b[1] - a[1]) * t,
  a[2] + (b[2] - a[2]) * t,
];
const shade = (c: [number, number, number], k: number): [number, number, number] => (k >= 0 ? mix(c, [255, 255, 255], k) : mix(c, [0, 0, 0], -k));
function hueShift(c: [number, number, number], deg: number): [number, number, number] {
  // Rotate hue in YIQ space (cheap, good enough for variety).
  const y = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
  const i = 0.596 * c[0] - 0.274 * c[1] - 0.322 * c[2];
  const q = 0.211 * c[0] - 0.523 * c[1] + 0.312 * c[2];
  const a = (deg * Math.PI) / 180;
  const i2 = i * Math.cos(a) - q * Math.sin(a);
  const q2 = i * Math.sin(a) + q * Math.cos(a);
  const clamp = (v: number) => Math.max(0, Math.min(255, v));
  return [clamp(y + 0.956 * i2 + 0.621 * q2), clamp(y - 0.272 * i2 - 0.647 * q2), clamp(y - 1.106 * i2 + 1.703 * q2)];
}

function glow(g: Ctx, x: number, y: number, r: number, c: [number, number, number], a: number, core = 0): void {
  const grad = g.createRadialGradient(x, y, r * core, x, y, r);
  grad.addColorStop(0, css(c, a));
  grad.addColorStop(1, css(c, 0));
  g.fillStyle = grad;
  g.fillRect(x - r, y - r, 2 * r, 2 * r);
}

function base(g: Ctx, top: [number, number, number], bottom: [number, number, number]): void {
  const grad = g.createLinearGradient(0, 0, 0, H);
  grad.addColorStop(0, css(top));
  grad.addColorStop(0.55, css(mix(top, bottom, 0.55)));
  grad.addColorStop(1, css(bottom));
  g.fillStyle = grad;
  g.fillRect(0, 0, W, H);
}

function vignette(g: Ctx, strength: number): void {
  const grad = g.createRadialGradient(W / 2, H * 0.42, H * 0.25, W / 2, H * 0.5, W * 0.62);
  grad.addColorStop(0, 'rgba(0,0,0,0)');
  grad.addColorStop(1, `rgba(0,0,0,${strength})`);
  g.fillStyle = grad;
  g.fillRect(0, 0, W, H);
}

function paintGradient(g: Ctx, b: BackdropRecord): void {
  const top = rgb(b.colors.top);
  const bottom = rgb(b.colors.bottom);
  const accent = rgb(b.colors.accent);
  base(g, top, bottom);
  // Key-lit sweep: a soft pool of light behind the subject, a rim glow lower down.
  glow(g, W * 0.5, H * 0.38, H * 0.75, accent, 0.32);
  glow(g, W * 0.28, H * 0.2, H * 0.6, shade(top, 0.2), 0.25);
  vignette(g, 0.28);
}

function paintRoom(g: Ctx, b: BackdropRecord, r: () => number): void {
  const top = rgb(b.colors.top);
  const bottom = rgb(b.colors.bottom);
  const accent = rgb(b.colors.accent);
  base(g, top, bottom);
  const wall = mix(top, bottom, 0.35);
  // A tall bright window on one side.
  const left = r() < 0.5;
  const wx = left ? W * (0.04 + r() * 0.08) : W * (0.66 + r() * 0.08);
  const ww = W * 0.26;
  const sky = shade(mix(top, accent, 0.25), 0.55);
  g.fillStyle = css(sky, 0.9);
  g.fillRect(wx, H * 0.08, ww, H * 0.62);
  g.fillStyle = css(shade(wall, -0.25), 0.8);
  for (let k = 1; k < 3; k++) g.fillRect(wx + (ww * k) / 3 - 6, H * 0.08, 12, H * 0.62);
  g.fillRect(wx, H * 0.38, ww, 10);
  glow(g, wx + ww / 2, H * 0.4, H * 0.7, sky, 0.35);
  // Shelves with books on the other side.
  const sx = left ? W * 0.64 : W * 0.04;
  const sw = W * 0.3;
  for (let row = 0; row < 4; row++) {
    const y = H * (0.12 + row * 0.16);
    g.fillStyle = css(shade(wall, -0.35), 0.9);
    g.fillRect(sx, y + H * 0.12, sw, 10);
    let x = sx + 8;
    while (x < sx + sw - 20) {
      const bw = 10 + r() * 22;
      const bh = H * (0.07 + r() * 0.05);
      if (r() < 0.85) {
        const c = hueShift(mix(wall, accent, r() * 0.6), (r() - 0.5) * 120);
        g.fillStyle = css(shade(c, (r() - 0.6) * 0.5), 0.9);
        g.fillRect(x, y + H * 0.12 - bh, bw, bh);
      }
      x += bw + 2 + (r() < 0.15 ? 30 : 0);
    }
  }
  // Warm lamps and a plant.
  for (let k = 0; k < 3; k++) glow(g, W * (0.3 + r() * 0.4), H * (0.15 + r() * 0.35), H * (0.12 + r() * 0.1), accent, 0.7, 0.1);
  const leaf: [number, number, number] = mix([70, 110, 60], accent, 0.3);
  const px = left ? W * 0.36 : W * 0.58;
  for (let k = 0; k < 26; k++) glow(g, px + (r() - 0.5) * W * 0.1, H * (0.45 + r() * 0.3), H * (0.04 + r() * 0.05), shade(leaf, (r() - 0.5) * 0.5), 0.8, 0.5);
  // Floor.
  const fg = g.createLinearGradient(0, H * 0.74, 0, H);
  fg.addColorStop(0, css(shade(bottom, -0.1), 0.0));
  fg.addColorStop(0.15, css(shade(bottom, -0.1), 0.9));
  fg.addColorStop(1, css(shade(bottom, -0.35), 1));
  g.fillStyle = fg;
  g.fillRect(0, H * 0.74, W, H * 0.26);
  vignette(g, 0.3);
}

function paintBokeh(g: Ctx, b: BackdropRecord, r: () => number): void {
  const top = rgb(b.colors.top);
  const bottom = rgb(b.colors.bottom);
  const accent = rgb(b.colors.accent);
  base(g, top, bottom);
  glow(g, W * 0.5, H * 0.45, H * 0.8, mix(top, accent, 0.2), 0.25);
  g.globalCompositeOperation = 'lighter';
  for (let k = 0; k < 90; k++) {
    const rad = H * (0.015 + r() ** 2 * 0.075);
    const x = r() * W;
    const y = H * (0.05 + r() ** 1.3 * 0.75);
    const c = hueShift(shade(accent, (r() - 0.4) * 0.5), (r() - 0.5) * 70);
    const a = 0.08 + r() * 0.32;
    // A disc with a flat centre and a soft rim, like an out-of-focus light.
    const grad = g.createRadialGradient(x, y, 0, x, y, rad);
    grad.addColorStop(0, css(c, a * 0.8));
    grad.addColorStop(0.75, css(c, a));
    grad.addColorStop(0.9, css(c, a * 0.6));
    grad.addColorStop(1, css(c, 0));
    g.fillStyle = grad;
    g.beginPath();
    g.arc(x, y, rad, 0, Math.PI * 2);
    g.fill();
  }
  g.globalCompositeOperation = 'source-over';
  vignette(g, 0.35);
}

function paintPlain(g: Ctx): void {
  base(g, [88, 92, 99], [34, 36, 41]);
  glow(g, W * 0.5, H * 0.4, H * 0.7, [150, 156, 165], 0.3);
  vignette(g, 0.3);
}

/** Gaussian-like blur by halving then doubling; radius grows with `amount` (0..1). */
function blur(canvas: HTMLCanvasElement, amount: number): void {
  const steps = Math.round(amount * 5);
  if (steps <= 0) return;
  const levels: HTMLCanvasElement[] = [canvas];
  for (let k = 1; k <= steps; k++) {
    const prev = levels[k - 1];
    const c = document.createElement('canvas');
    c.width = Math.max(4, prev.width >> 1);
    c.height = Math.max(2, prev.height >> 1);
    const g = c.getContext('2d')!;
    g.imageSmoothingEnabled = true;
    g.imageSmoothingQuality = 'high';
    g.drawImage(prev, 0, 0, c.width, c.height);
    levels.push(c);
  }
  for (let k = steps - 1; k >= 0; k--) {
    const g = levels[k].getContext('2d')!;
    g.imageSmoothingEnabled = true;
    g.imageSmoothingQuality = 'high';
    g.clearRect(0, 0, levels[k].width, levels[k].height);
    g.drawImage(levels[k + 1], 0, 0, levels[k].width, levels[k].height);
  }
}

function dither(g: Ctx): void {
  const img = g.getImageData(0, 0, W, H);
  const d = img.data;
  for (let i = 0; i < d.length; i += 4) {
    const n = (Math.random() - 0.5) * 2;
    d[i] += n;
    d[i + 1] += n;
    d[i + 2] += n;
  }
  g.putImageData(img, 0, 0);
}

export function paintBackdrop(b: BackdropRecord | null): HTMLCanvasElement {
  const canvas = document.createElement('canvas');
  canvas.width = W;
  canvas.height = H;
  const g = canvas.getContext('2d')!;
  const r = rng(b?.backdrop_id ?? 'plain');
  if (!b) paintPlain(g);
  else if (b.kind === 'room') paintRoom(g, b, r);
  else if (b.kind === 'bokeh') paintBokeh(g, b, r);
  else paintGradient(g, b);
  const amount = b ? (b.kind === 'bokeh' ? 0.35 + 0.35 * b.blur : b.blur) : 0.3;
  blur(canvas, amount);
  dither(g);
  return canvas;
}

/** Seconds a backdrop change cross-fades. */
const FADE = 0.6;

/**
 * CSS `matrix3d` taking the element's W×H box to the quad `q` (top-left, top-right, bottom-right,
 * bottom-left, in CSS pixels): the plane's projection, exact under perspective.
 */
export function quadTransform(q: [number, number][]): string {
  const [[x0, y0], [x1, y1], [x2, y2], [x3, y3]] = q;
  const dx1 = x1 - x2,
    dx2 = x3 - x2,
    dx3 = x0 - x1 + x2 - x3;
  const dy1 = y1 - y2,
    dy2 = y3 - y2,
    dy3 = y0 - y1 + y2 - y3;
  const den = dx1 * dy2 - dx2 * dy1;
  const g = den ? (dx3 * dy2 - dx2 * dy3) / den : 0;
  const h = den ? (dx1 * dy3 - dx3 * dy1) / den : 0;
  const a = x1 - x0 + g * x1,
    b = x3 - x0 + h * x3,
    c = x0;
  const d = y1 - y0 + g * y1,
    e = y3 - y0 + h * y3,
    f = y0;
  // Unit square → quad, after scaling the element's pixels to the unit square (column-major).
  const m = [a / W, d / W, 0, g / W, b / H, e / H, 0, h / H, 0, 0, 1, 0, c, f, 0, 1];
  return `matrix3d(${m.map((v) => +v.toPrecision(9)).join(',')})`;
}

interface Layer {
  canvas: HTMLCanvasElement;
  opacity: number;
}

export class Backdrop {
  id: string | null = null;
  private layer: Layer | null = null;
  private old: Layer | null = null;
  private fadeStart = 0;
  private center = new Vector3();
  private size = 1;
  private readonly corner = new Vector3();
  private lastTransform = '';

  /** `host`: the element under the WebGL canvas that holds the painted canvases. */
  constructor(private readonly host: HTMLElement) {}

  /** Where the plane stands: behind the head by `depth`, `height` tall. */
  layout(center: Vector3, headHeight: number): void {
    this.center.copy(center);
    this.size = headHeight;
    this.lastTransform = '';
  }

  set(b: BackdropRecord | null, now: number, fade: boolean): void {
    const canvas = paintBackdrop(b);
    canvas.className = 'backdrop';
    canvas.style.opacity = fade ? '0' : '1';
    if (this.old) this.remove(this.old);
    this.old = fade ? this.layer : null;
    if (!fade && this.layer) this.remove(this.layer);
    this.layer = { canvas, opacity: fade ? 0 : 1 };
    this.host.appendChild(canvas);
    this.lastTransform = '';
    this.fadeStart = now;
    this.id = b?.backdrop_id ?? null;
  }

  /**
   * Fades and places the painting where the plane (20 × 10 head heights, 6 behind the eyes,
   * centred 0.6 head heights below them, facing the camera's axis) projects through `camera` onto
   * a `width`×`height` view (CSS pixels).
   */
  update(now: number, camera: Camera, width: number, height: number): void {
    if (!this.layer) return;
    camera.updateMatrixWorld();
    if (this.layer.opacity < 1) {
      const x = Math.min(1, (now - this.fadeStart) / FADE);
      this.layer.opacity = x;
      this.layer.canvas.style.opacity = String(x);
      if (x >= 1 && this.old) this.remove(this.old), (this.old = null);
    }
    const h = this.size;
    const cx = this.center.x,
      cy = this.center.y - h * 0.6,
      cz = this.center.z - h * 6;
    const quad = (
      [
        [-0.5, 0.5],
        [0.5, 0.5],
        [0.5, -0.5],
        [-0.5, -0.5],
      ] as const
    ).map(([u, v]): [number, number] => {
      const p = this.corner.set(cx + u * h * 20, cy + v * h * 10, cz).project(camera);
      return [((p.x + 1) / 2) * width, ((1 - p.y) / 2) * height];
    });
    const transform = quadTransform(quad);
    if (transform === this.lastTransform) return;
    this.lastTransform = transform;
    this.layer.canvas.style.transform = transform;
    if (this.old) this.old.canvas.style.transform = transform;
  }

  private remove(layer: Layer): void {
    layer.canvas.remove();
    layer.canvas.width = layer.canvas.height = 0;
  }
}
