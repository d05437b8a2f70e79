/// <reference lib="dom" />
/**
 * The player page: wires the channel, audio, clock and animation sources to the stage, runs the
 * frame loop, and publishes the read-only `window.presence` diagnostics (see docs/player.md).
 */
import { AudioOut } from './audio.js';
import { Backdrop } from './backdrop.js';
import { Blinker } from './blink.js';
import { CameraRig } from './camera.js';
import { Channel } from './channel.js';
import { Expressions } from './expression.js';
import { Idle } from './idle.js';
import { LipSync } from './lipsync.js';
import { MorphMixer } from './morphs.js';
import type { PlayerState, BackdropRecord, HelloMessage, PlayerMessage } from './protocol.js';
import { fetchFace, Stage } from './scene.js';
import { Ui } from './ui.js';
import { Microphone } from './microphone.js';
import { ConversationUi, type Indication } from './conversation-ui.js';

interface PageConfig {
  /** WebSocket path or URL of the player channel. */
  ws: string;
  worklet: string;
  /** The face's GLB, when the server knows it before hello (preloaded). */
  face?: string | null;
}

performance.mark('face:script');
const cfg: PageConfig = JSON.parse(document.getElementById('presence-config')?.textContent || '{}');
// The face first: its bytes are read (from the preload) while the rest of the page starts.
const earlyFace = cfg.face ? { url: cfg.face, data: fetchFace(cfg.face) } : null;
earlyFace?.data.catch(() => {});
const wsUrl = new URL(cfg.ws, location.href);
wsUrl.protocol = wsUrl.protocol === 'https:' ? 'wss:' : 'ws:';

const ui = new Ui();
const canvas = document.getElementById('stage') as HTMLCanvasElement;
const audio = new AudioOut(cfg.worklet);
const params = new URLSearchParams(location.search);
const detailParam = params.get('detail');
const stage = new Stage(canvas, detailParam === 'full' || detailParam === 'light' ? detailParam : 'auto');
const rig = new CameraRig();
const mixer = new MorphMixer();
const lips = new LipSync();
const blinker = new Blinker();
const idle = new Idle();
const expressions = new Expressions();
const backdrop = new Backdrop(
  document.getElementById('backdrop') ?? canvas.parentElement!.insertBefore(Object.assign(document.createElement('div'), { id: 'backdrop' }), canvas),
);

let avatar: PlayerState = 'idle';
let hello: HelloMessage | null = null;
let faceUrl: string | null = null;
let facePromise: Promise<unknown> | null = null;
let faceReady = false;
let readySent = false;
let speech = 0;
let fastCloseUntil = 0;
/** When the last interrupt arrived and when the mouth was first seen closed after it (ms, performance.now). */
const lastInterrupt: { received: number | null; closed: number | null } = { received: null, closed: null };
/** The same for the last pause (the visitor began speaking over the agent), and when the voice resumed. */
const lastPause: { received: number | null; closed: number | null; resumed: number | null } = { received: null, closed: null, resumed: null };
let peak = 0;
let lastSpeech = -Infinity;
let fps = 0;
let firstFrame: number | null = null;
let faceFrame: number | null = null;
/** Whether the GPU has finished the first frame with the face (Stage.drawn), once it was issued. */
let faceDrawn: (() => boolean) | null = null;
let pixelScale = 1;
/** The face's still picture (server-rendered, in the page's HTML): when it was painted and when the live head replaced it (ms since navigation start). */
const stillEl = document.getElementById('still') as HTMLImageElement | null;
const still = { url: stillEl?.getAttribute('src') ?? null, painted: null as number | null, hidden: null as number | null };
if (stillEl && typeof PerformanceObserver === 'function' && PerformanceObserver.supportedEntryTypes?.includes('element')) {
  // Element Timing: when the still was actually on screen (buffered: it usually paints before this script runs).
  new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { identifier?: string; renderTime?: number; loadTime?: number })[]) {
      if (e.identifier === 'face-still' && still.painted === null) still.painted = Math.round(e.renderTime || e.loadTime || e.startTime);
    }
  }).observe({ type: 'element', buffered: true });
}
/** Timed stage changes waiting for their moment on the session clock. */
let timed: { t: number; run: () => void }[] = [];
/** Stage changes timed after a pause's moment, kept for `resume`. */
let heldTimed: { t: number; run: () => void }[] = [];

const sessionNow = () => audio.clock.now();
const nowSec = () => performance.now() / 1000;

function at(t: number | undefined, run: () => void): void {
  const s = sessionNow();
  if (t === undefined || s === null || t <= s) return run();
  timed.push({ t, run });
  timed.sort((a, b) => a.t - b.t);
}

function loadFace(url: string): Promise<unknown> {
  if (faceUrl === url && facePromise) return facePromise;
  faceUrl = url;
  faceReady = false;
  const early = earlyFace?.url === url ? earlyFace.data : undefined;
  facePromise = stage.loadFace(url, early).then(
    (face) => {
      mixer.bind(face.meshes);
      lips.useVisemes = mixer.has('viseme_aa');
      rig.setFraming(face.framing);
      backdrop.layout(face.framing.eyes, face.framing.headHeight);
      faceReady = true;
      performance.mark('face:ready');
    },
    (err) => {
      console.error('face failed to load', err);
      facePromise = null;
      faceUrl = null;
    },
  );
  return facePromise;
}

function setBackdrop(b: BackdropRecord | null, fade: boolean): void {
  if ((b?.backdrop_id ?? null) === backdrop.id && fade) return;
  backdrop.set(b, nowSec(), fade);
}

// ---- conversation mode: the microphone, the visitor's controls, captions (docs/player.md)
const isConversation = () => hello?.session?.mode === 'conversation';
const mic = new Microphone(
  audio.ctx,
  () => audio.ready(),
  (frame) => channel.sendBinary(frame),
);
const conv = new ConversationUi({
  typed: (text) => channel.send({ type: 'visitor_text', text }),
  mute: (muted) => {
    mic.setMuted(muted);
    channel.send({ type: 'mic', muted });
  },
});
/** The utterance whose caption is showing. */
let captionUtterance: string | number | null = null;
let lastError: { code: string; message: string } | null = null;

function indicate(): void {
  let state: Indication = 'idle';
  if (avatar === 'talking') state = 'speaking';
  else if (avatar === 'thinking') state = 'thinking';
  else if (mic.state === 'granted') state = mic.muted ? 'muted' : 'listening';
  else if (mic.state === 'denied' || mic.state === 'unavailable') state = 'typing-only';
  conv.indicate(isConversation() ? state : 'idle');
  conv.setMuted(mic.muted, mic.state === 'granted');
}
mic.onChange = () => {
  indicate();
  if (mic.state === 'denied' || mic.state === 'unavailable') conv.focusText();
};

/** Conversation mode listens once sound runs (the one tap, or at once where autoplay is allowed). Render mode never asks. */
function startMicrophone(): void {
  if (!isConversation() || !audio.unlocked || ui.state === 'ended' || ui.state === 'invalid') return;
  void mic.start();
}

function onHello(h: HelloMessage): void {
  const first = !hello;
  hello = h;
  audio.reset();
  audio.anchorFromHello(h.now);
  lips.clear();
  timed = [];
  heldTimed = [];
  const studio = h.studio ?? { backdrop: null, cameras: ['mid'], face_light: 1 };
  stage.setFaceLight(studio.face_light ?? 1);
  stage.setSkinTone(h.face?.look?.skin);
  rig.setAllowed(studio.cameras ?? ['far', 'mid', 'close']);
  // `camera` is the current shot (or 'auto'); `camera_mode` says whether the director runs.
  const auto = studio.camera_mode === 'auto' || studio.camera === 'auto';
  const shot = studio.camera && studio.camera !== 'auto' ? studio.camera : undefined;
  if (first) rig.place(auto ? 'auto' : (shot ?? 'mid'), nowSec(), shot);
  else rig.request(auto ? 'auto' : (shot ?? rig.shot), false, nowSec());
  rig.hold = !!studio.hold || studio.camera_mode === 'hold';
  setBackdrop(studio.backdrop ?? null, !first);
  avatar = h.state ?? 'idle';
  if (h.face?.model_url) void loadFace(h.face.model_url);
  conv.show(h.session?.mode === 'conversation');
  conv.showAgent('');
  captionUtterance = null;
  // After a reconnect the server learns the mute again (it also keeps it per session).
  if (isConversation() && mic.muted) channel.send({ type: 'mic', muted: true });
  if (isConversation() && !audio.unlocked) ui.soundLabel('Tap to start talking');
  startMicrophone();
  indicate();
  readySent = false;
  void facePromise?.then(() => {
    if (hello !== h) return;
    ui.set('live');
    // A visitor without a microphone gets the text box ready (it shows once the page is live).
    if (mic.state === 'denied' || mic.state === 'unavailable') conv.focusText();
  });
}

function onMessage(m: PlayerMessage): void {
  switch (m.type) {
    case 'hello':
      return onHello(m);
    case 'track':
      return lips.add(m);
    case 'expression':
      return expressions.start(m.t, m.name, m.intensity ?? 1, m.duration);
    case 'camera':
      return at(m.t, () => rig.request(m.camera, m.hold, nowSec(), (m as { transition?: 'cut' | 'move' }).transition));
    case 'backdrop':
      return at(m.t, () => setBackdrop(m.backdrop ?? null, true));
    case 'state':
      return at(m.t, () => {
        avatar = m.state;
        indicate();
      });
    case 'utterance_end':
      return at(m.t, () => {
        // The caption lingers a moment after the voice, then clears unless another took its place.
        const utterance = m.utterance;
        setTimeout(() => {
          if (captionUtterance === utterance) {
            conv.showAgent('');
            captionUtterance = null;
          }
        }, 1500);
      });
    case 'caption':
      return at(m.t, () => {
        captionUtterance = m.utterance;
        conv.showAgent(m.text);
      });
    case 'visitor_transcript':
      return conv.showVisitor(m.text, m.final);
    case 'error':
      lastError = { code: m.code, message: m.message };
      console.warn('player channel:', m.code, m.message);
      return;
    case 'interrupt': {
      const s = sessionNow() ?? m.t;
      const from = Math.min(m.t, s);
      audio.interrupt(from);
      lips.interrupt(from);
      fastCloseUntil = nowSec() + 0.3;
      lastInterrupt.received = performance.now();
      lastInterrupt.closed = null;
      timed = timed.filter((x) => x.t < from);
      heldTimed = [];
      conv.showAgent('');
      captionUtterance = null;
      return;
    }
    case 'pause': {
      // As an interrupt, except that what was to come is kept: the voice may go on (resume).
      const from = audio.pause(m.t);
      lips.pause(from);
      fastCloseUntil = nowSec() + 0.3;
      lastPause.received = performance.now();
      lastPause.closed = null;
      lastPause.resumed = null;
      heldTimed = timed.filter((x) => x.t >= from);
      timed = timed.filter((x) => x.t < from);
      return;
    }
    case 'resume': {
      audio.resume(m.shift);
      lips.resume(m.shift);
      for (const x of heldTimed) timed.push({ t: x.t + m.shift, run: x.run });
      timed.sort((a, b) => a.t - b.t);
      heldTimed = [];
      lastPause.resumed = performance.now();
      return;
    }
    case 'ended':
      mic.stop();
      audio.reset();
      lips.clear();
      ui.set('ended');
      channel.stop();
      return;
  }
}

const channel = new Channel(wsUrl.toString(), location.href, {
  message: onMessage,
  audio: (frame) => {
    if (hello) audio.push(frame, hello.sample_rate || 24000);
  },
  open: () => {},
  drop: () => {
    if (ui.state !== 'loading') ui.set('reconnecting');
    readySent = false;
  },
  invalid: () => ui.set('invalid'),
});

// Sound: try to start at once; if the browser blocks autoplay, one tap starts it.
audio.onUnlockChange = (on) => {
  if (on) ui.soundOn();
  if (on) startMicrophone();
  if (readySent) channel.send({ type: 'ready', audio: on });
};
void audio.ready().catch((e) => console.error('audio worklet failed', e));
void audio.unlock().then((ok) => {
  if (ok) return;
  // The one tap: starts the sound and, in conversation mode, the microphone.
  const start = () => {
    void audio.unlock().then((on) => {
      if (!on) return;
      ui.soundOn();
      startMicrophone();
    });
  };
  ui.askForSound(start, isConversation() ? 'Tap to start talking' : undefined);
  document.addEventListener('pointerdown', start, { once: true });
});

if (cfg.face) void loadFace(cfg.face);
channel.connect();

// Rendering size: the frame's size, device pixel ratio capped at 2, scaled down when slow.
let viewW = 1;
let viewH = 1;
function resize(): void {
  const w = canvas.clientWidth || window.innerWidth;
  const h = canvas.clientHeight || window.innerHeight;
  viewW = w;
  viewH = h;
  stage.resize(w, h, Math.min(window.devicePixelRatio || 1, 2) * pixelScale);
  rig.setAspect(w / Math.max(1, h));
}
window.addEventListener('resize', resize);
resize();

rig.onCut = () => {
  if (Math.random() < 0.5) blinker.trigger(nowSec());
};

let last = nowSec();
let frames = 0;
let fpsSince = last;
let slowWindows = 0;

function aheadOpenness(s: number): number {
  let sum = 0;
  for (let k = 1; k <= 12; k++) sum += lips.opennessAt(s + k * 0.1);
  return sum / 12;
}

let cpuMs = 0;
let renderMs = 0;

/** Advances every animation source to now (the frame loop, and diagnostics between frames). */
function animate(): void {
  const now = nowSec();
  const dt = Math.min(0.1, now - last);
  last = now;
  const s = sessionNow();
  while (timed.length && s !== null && timed[0].t <= s) timed.shift()!.run();

  let talking = false;
  if (s !== null) {
    const target = lips.sample(s, mixer.layer('speech'));
    speech += (target - speech) * (1 - Math.exp(-dt / (target > speech ? 0.03 : 0.12)));
    mixer.speechAmount = speech;
    expressions.sample(s, mixer.layer('expression'));
    talking = lips.speaking(s);
    if (talking) lastSpeech = now;
    peak = Math.max(peak * Math.exp(-dt / 6), lips.openness);
    lips.prune(s);
  }
  const listening = avatar === 'listening';
  blinker.rate = listening ? 0.85 : 1;
  idle.update(now, dt, talking ? 'talking' : avatar, lips.openness, mixer.layer('idle'), expressions.current === 'thinking' || avatar === 'thinking');
  if (idle.bigSaccade && Math.random() < 0.35) blinker.trigger(now);
  const blink = blinker.update(now);
  const bl = mixer.layer('blink');
  bl.set('eyeBlinkLeft', blink);
  bl.set('eyeBlinkRight', blink);
  mixer.update(dt, now < fastCloseUntil);

  rig.update(now, { talking, listening, ahead: s === null ? 0 : aheadOpenness(s), peak, silence: talking ? 0 : now - lastSpeech });
  stage.pose(idle.pose, rig.camera.position);
  backdrop.update(now, rig.camera, viewW, viewH);
}

function frame(): void {
  requestAnimationFrame(frame);
  const t0 = performance.now();
  animate();
  const now = nowSec();
  const t1 = performance.now();
  if (faceFrame === null && faceReady && !faceDrawn) performance.mark('face:render');
  stage.render(rig.camera);
  const t2 = performance.now();
  cpuMs += (t1 - t0 - cpuMs) * 0.05;
  renderMs += (t2 - t1 - renderMs) * 0.05;

  if (lastInterrupt.received !== null && lastInterrupt.closed === null && mixer.value('jawOpen') < 0.05) lastInterrupt.closed = performance.now();
  if (lastPause.received !== null && lastPause.closed === null && mixer.value('jawOpen') < 0.05) lastPause.closed = performance.now();
  if (firstFrame === null) firstFrame = performance.now();
  // The live face's first frame counts once the GPU has finished it (not when its commands were issued).
  if (faceFrame === null && faceReady && !faceDrawn) faceDrawn = stage.drawn();
  if (faceFrame === null && faceDrawn?.()) {
    faceFrame = performance.now();
    // The live head is in this frame: the still goes at the next one, once this frame is on screen.
    if (stillEl) {
      requestAnimationFrame(() => {
        document.body.dataset.still = 'gone';
        still.hidden = performance.now();
      });
    }
  }
  if (faceReady && hello && !readySent && channel) {
    readySent = true;
    channel.send({ type: 'ready', audio: audio.unlocked });
  }
  frames++;
  if (now - fpsSince >= 1) {
    fps = frames / (now - fpsSince);
    frames = 0;
    fpsSince = now;
    // Adaptive resolution: shed pixels when the device cannot keep up, regain them when it can.
    if (fps < 27 && pixelScale > 0.5 && !params.has('fixed')) slowWindows++;
    else slowWindows = 0;
    if (slowWindows >= 2) {
      pixelScale = Math.max(0.5, pixelScale * 0.8);
      slowWindows = 0;
      resize();
    } else if (fps > 55 && pixelScale < 1) {
      pixelScale = Math.min(1, pixelScale * 1.1);
      resize();
    }
  }
}
requestAnimationFrame(frame);

setInterval(() => {
  if (hello && ui.state === 'live') channel.send({ type: 'stats', audio_time: audio.audioTime(), fps: Math.round(fps * 10) / 10, buffered: audio.buffered() });
}, 5000);

// Read-only diagnostics for tests and support (docs/player.md).
const presence = Object.freeze({
  get state() {
    return ui.state;
  },
  get avatar() {
    return avatar;
  },
  get camera() {
    return rig.shot;
  },
  get cameraMode() {
    return rig.hold ? 'hold' : rig.mode;
  },
  get backdrop() {
    return backdrop.id;
  },
  get faceLight() {
    return stage.faceLight;
  },
  get face() {
    return faceReady ? faceUrl : null;
  },
  get audioUnlocked() {
    return audio.unlocked;
  },
  get microphone() {
    return mic.state;
  },
  /** Conversation mode: the visitor's side (microphone frames, mute, the indication, captions). */
  get conversation() {
    return {
      muted: mic.muted,
      framesSent: mic.framesSent,
      framesDropped: mic.framesDropped,
      micLevel: Math.round(mic.level * 1e4) / 1e4,
      indication: conv.indication,
      captions: conv.captionsOn,
      caption: conv.agentCaption,
      visitorCaption: conv.visitorCaption,
      lastError,
    };
  },
  get blinks() {
    return blinker.count;
  },
  get expression() {
    return expressions.current;
  },
  get reconnects() {
    return Math.max(0, channel.connects - 1);
  },
  get pixelRatio() {
    return stage.renderer.getPixelRatio();
  },
  /** Level of detail in use, the triangles the face's meshes kept (`light`: simplified), and the materials drawn. */
  get detail() {
    return {
      level: stage.detail,
      software: stage.software,
      ms: Math.round(stage.lod.ms),
      meshes: stage.lod.meshes.map((r) => ({ ...r })),
      materials: stage.faceMaterials(),
      /** Shader programs the renderer has built (each a pipeline a software rasteriser builds at its first draw). */
      programs: stage.renderer.info.programs?.length ?? 0,
    };
  },
  /** ms since navigation start: the first frame, the first with the face, and each face-load step (`face:…` marks). */
  get timings() {
    const steps: Record<string, number> = {};
    for (const m of performance.getEntriesByType('mark')) if (m.name.startsWith('face:')) steps[m.name.slice(5)] = Math.round(m.startTime);
    return { firstFrame, faceFrame, steps };
  },
  get lastInterrupt() {
    return { ...lastInterrupt };
  },
  get lastPause() {
    return { ...lastPause };
  },
  /** The still picture under the canvas: its URL (null: none), when it painted and when the live head replaced it (ms since navigation start). */
  get still() {
    return { ...still, hidden: still.hidden === null ? null : Math.round(still.hidden) };
  },
  /** Whether the live head has drawn (its first frame: `timings.faceFrame`). */
  get liveFace() {
    return faceFrame !== null;
  },
  /** Current morph weights; the animation is advanced to this instant (not just the last frame). */
  morphs: () => {
    if (performance.now() / 1000 - last > 0.004) animate();
    return mixer.snapshot();
  },
  audioTime: () => audio.audioTime(),
  audioLevel: () => audio.heardLevel(),
  audioLevels: () => audio.levelHistory(),
  audioDebug: () => audio.debug(),
  sessionTime: () => sessionNow(),
  buffered: () => audio.buffered(),
  fps: () => Math.round(fps * 10) / 10,
  /** Main-thread milliseconds per frame: animation, and issuing the render. */
  frameMs: () => ({ animation: Math.round(cpuMs * 100) / 100, render: Math.round(renderMs * 100) / 100 }),
});
Object.defineProperty(window, 'presence', { value: presence, writable: false, configurable: false });
