/**
 * Voice-to-voice latency of a live conversation with the offline engines (Silero VAD + adaptive
 * end of turn, pocketsphinx, the offline brain, the flite voice), through a real server and the real
 * player channel, and how many talking visitors one node carries before that latency doubles.
 *
 * 1. N turns (default 30) in one conversation: a page streams recorded speech (pocketsphinx-
 *    testdata: LibriVox sentences and spoken card names) in 20 ms frames at real time, as the
 *    player page does. Voice-to-voice = from the end of the visitor's last word (known from the
 *    audio: the sample where speech ends, timed as it was sent) to the first audio frame of the
 *    answer arriving at the page. Where the time goes comes from the turn's record (its latency
 *    waterfall, measured from the VAD's last voiced frame): the end-of-turn silence wait,
 *    recognition, the answering engine's first text, and speech until the first audio leaves.
 *    Preemptive generation (the answer prepared from the recogniser's words before the end of turn
 *    is decided) is on, as in the service; `--no-preempt` turns it off, and `--compare` alternates
 *    turn by turn (each clip is spoken once each way, in turn), so both columns see the same clips
 *    and the same load. With it on: how many answers were prepared, kept and thrown away, the
 *    wall-clock work thrown away, and the process's CPU per turn either way.
 * 2. Talking visitors: 1, 2, 4, 6, 8… conversations at once, each taking turns back to back; the
 *    voice-to-voice p50 at each level, until it is twice the single visitor's (`--max-visitors 0`
 *    skips it).
 *
 *   node --import tsx bench/conversation.ts [--turns 30] [--max-visitors 12] [--turns-per-visitor 3]
 *     [--whole-turns] [--no-preempt | --compare] [--no-pitch | --compare-turn-taking | --against-stop-31]
 *     [--words-at-end | --compare-early-words]
 *
 * `--no-pitch` runs the end-of-turn rule before pitch (pauses and words); `--compare-turn-taking`
 * alternates it with the shipped one (words, pitch and pauses) turn by turn, each in a conversation
 * of its own, the same clip once each way; `--against-stop-31` likewise alternates the shipped rule
 * with stop 31's (a rise waiting the learnt silence). `--words-at-end` runs pocketsphinx as it was before its
 * words came in the visitor's pause (no decoder started ahead, no pause told, every turn waiting for
 * the decoder's exit); `--compare-early-words` alternates it with the shipped way likewise.
 *
 * The numbers depend on the machine's load: the load average is printed beside them.
 */
import os from 'node:os';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../test/support/app.js';
import { cards, concat, librivox, silence, speechSpan, testdataInstalled, type Recording } from '../test/recognition/recordings.js';
import { SHOP_PROMPT } from '../test/conversation/support.js';
import { PocketsphinxRecognizer } from '../src/speech/recognition/pocketsphinx.js';
import type { ListenerOptions } from '../src/conversation/listening/index.js';
import { PITCH_OFF } from '../src/conversation/listening/end-of-turn.js';
import type { Recognizer } from '../src/speech/recognition/types.js';
import { wordsAtEndRecognizer } from './support/words-at-end.js';
import { MIC_CHUNK } from '../src/player/client/mic-worklet.js';
import { decodeFrame } from '../src/realtime/frame-codec.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const TURNS = arg('--turns', 30);
const MAX_VISITORS = arg('--max-visitors', 12);
const TURNS_PER_VISITOR = arg('--turns-per-visitor', 3);
/** Recognise each turn whole after it ended (how pocketsphinx worked before it decoded live), for a before/after. */
const WHOLE_TURNS = args.includes('--whole-turns');
/** Preemptive generation off for every turn, or alternated turn by turn (on, off, on…) for a before/after. */
const NO_PREEMPT = args.includes('--no-preempt');
const COMPARE = args.includes('--compare');
/** The end-of-turn rule before pitch, or both rules alternated turn by turn (two conversations, the same clips). */
const NO_PITCH = args.includes('--no-pitch');
const COMPARE_TURN_TAKING = args.includes('--compare-turn-taking');
const AGAINST_STOP_31 = args.includes('--against-stop-31');
/** The end-of-turn rule before pitch: pauses and words. */
const BEFORE_PITCH: ListenerOptions = { endOfTurn: PITCH_OFF };
/** Stop 31's rule: a rise waits the learnt silence. */
const STOP_31: ListenerOptions = { endOfTurn: { risingSilenceMs: 0 } };
/**
 * The recogniser as it was before its words came in the pause (`--words-at-end`): no decoder
 * started ahead, no pause told to it, and every turn waits for the decoder's exit; or both
 * alternated turn by turn (`--compare-early-words`), each in a conversation of its own.
 */
const WORDS_AT_END = args.includes('--words-at-end');
const COMPARE_EARLY_WORDS = args.includes('--compare-early-words');
function wordsAtEnd(live: object): void {
  (live as { deps: { recognizer?: Recognizer } }).deps.recognizer = wordsAtEndRecognizer();
}
/** The conversation's listener (made on its first audio) takes another end-of-turn rule. */
function endOfTurnRule(live: object, rule: ListenerOptions): void {
  const deps = (live as { deps: { listenerOptions?: ListenerOptions } }).deps;
  deps.listenerOptions = { ...deps.listenerOptions, ...rule, endOfTurn: { ...deps.listenerOptions?.endOfTurn, ...rule.endOfTurn } };
}

/** The player page's microphone frame (mic-worklet.ts): 20 ms at 16 kHz. */
const MIC_FRAME = MIC_CHUNK;

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
function pct(values: number[], p: number): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] : NaN;
}
const ms = (x: number) => (Number.isFinite(x) ? `${Math.round(x)}` : '-');

/** A page: streams microphone frames and notes when the answer's first audio arrives. */
class Page {
  private seq = 0;
  private firstAnswerAudio?: (at: number) => void;
  private answerEnded?: () => void;
  private answerId?: string;
  readonly ready: Promise<void>;

  constructor(readonly socket: WebSocket) {
    this.ready = new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.on('message', (data: Buffer, isBinary) => {
        const at = performance.now();
        if (!isBinary) {
          const m = JSON.parse(data.toString());
          if (m.type === 'hello') resolve();
          if (m.type === 'utterance_end' && m.utterance === this.answerId) this.answerEnded?.();
          return;
        }
        const track = decodeFrame(data)?.track;
        if (!track) return;
        if (/^answer_/.test(track.utterance) && !this.answerId) {
          this.answerId = track.utterance;
          this.firstAnswerAudio?.(at);
        }
      });
    });
  }

  /** Speaks the turn; resolves with the page-measured voice-to-voice and when the answer has played. */
  async turn(clip: Recording): Promise<{ voiceToVoice: number }> {
    this.answerId = undefined;
    const audio = concat(silence(300), clip.pcm, silence(2500));
    const lastWordSample = Math.round((300 + speechSpan(clip.pcm).endMs) * 16);
    let lastWordAt = NaN;
    const firstAudio = new Promise<number>((resolve) => (this.firstAnswerAudio = resolve));
    const ended = new Promise<void>((resolve) => (this.answerEnded = resolve));
    const began = performance.now();
    let answeredAt: number | undefined;
    void firstAudio.then((at) => (answeredAt = at));
    for (let i = 0, n = 0; i < audio.length && answeredAt === undefined; i += MIC_FRAME, n++) {
      const piece = audio.subarray(i, Math.min(audio.length, i + MIC_FRAME));
      const bytes = Buffer.alloc(4 + piece.length * 2);
      bytes.writeUInt32LE(this.seq++, 0);
      Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).copy(bytes, 4);
      this.socket.send(bytes, { binary: true });
      // The page sends a frame when its last sample was captured: the last word ends inside this frame.
      if (lastWordSample >= i && lastWordSample < i + piece.length) lastWordAt = performance.now() - (i + piece.length - lastWordSample) / 16;
      const wait = began + ((n + 1) * MIC_FRAME) / 16 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const heard = await Promise.race([firstAudio, new Promise<number>((r) => setTimeout(() => r(NaN), 60_000))]);
    await Promise.race([ended, new Promise((r) => setTimeout(r, 20_000))]);
    return { voiceToVoice: heard - lastWordAt };
  }
}

async function openConversation(t: TestApp, agentId: number): Promise<{ id: string; page: Page }> {
  const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agentId } });
  if (started.status !== 201) throw new Error(JSON.stringify(started.body));
  const page = new Page(new WebSocket(started.body.player_url.replace(/^http/, 'ws') + '/ws'));
  await page.ready;
  return { id: started.body.session_id, page };
}

/** The answers' waterfalls; with `count`, waits (up to 30 s) until that many answers are recorded (an answer is recorded once it has been heard). */
async function waterfalls(t: TestApp, id: string, count = 0) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = await recordedWaterfalls(t, id);
    if (found.length >= count || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function recordedWaterfalls(t: TestApp, id: string) {
  const rows = await t.database.db.selectFrom('conversation_turns').select(['role', 'details']).where('conversation_id', '=', id).orderBy('id').execute();
  return rows.filter((r) => r.role === 'agent' && (r.details as any).source === 'answer').map((r) => (r.details as any).latency_ms);
}

async function main() {
  if (!testdataInstalled()) throw new Error('pocketsphinx-testdata is not installed (apt-get install pocketsphinx-testdata)');
  const clips = [...librivox(), ...cards()];
  console.log(`# Conversation voice-to-voice (offline engines: Silero VAD, pocketsphinx, offline brain, flite)`);
  console.log(`node ${process.version}, ${os.cpus().length} cores, load average before: ${load()}\n`);
  if (WHOLE_TURNS) delete (PocketsphinxRecognizer.prototype as Partial<PocketsphinxRecognizer>).stream;
  console.log(`pocketsphinx: ${WHOLE_TURNS ? 'each turn recognised whole after it ended (--whole-turns)' : 'live decoding while the visitor speaks'}\n`);
  const t = await startTestApp('pglite', { STT_ENGINE: 'pocketsphinx', RATE_LIMIT_PER_SECOND: '100000' });
  try {
    await t.context.speech.start();
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Ava', system_prompt: SHOP_PROMPT, concurrency_limit: 100 } })).body.id;

    // ---- 1. one visitor, N turns
    // Each way of running is a conversation of its own (the end-of-turn rule is the listener's, made
    // on the conversation's first audio); --compare runs one conversation both ways.
    /** `rule`: changes to the shipped listener's end-of-turn rule ({} ships it). */
    type Way = { label: string; preempt: boolean; rule: ListenerOptions; early: boolean };
    const early = !WORDS_AT_END;
    const pitch = NO_PITCH ? BEFORE_PITCH : {};
    const ways: Way[] = COMPARE_TURN_TAKING
      ? [
          { label: 'words, pitch and pauses (after)', preempt: !NO_PREEMPT, rule: {}, early },
          { label: 'pauses and words (before)', preempt: !NO_PREEMPT, rule: BEFORE_PITCH, early },
        ]
      : AGAINST_STOP_31
        ? [
            { label: 'shipped (after)', preempt: !NO_PREEMPT, rule: {}, early },
            { label: 'stop 31 (before)', preempt: !NO_PREEMPT, rule: STOP_31, early },
          ]
        : COMPARE
          ? [
              { label: 'preemptive', preempt: true, rule: pitch, early },
              { label: 'no preemption', preempt: false, rule: pitch, early },
            ]
          : COMPARE_EARLY_WORDS
            ? [
                { label: 'words in the pause (after)', preempt: !NO_PREEMPT, rule: pitch, early: true },
                { label: 'words at the end (before)', preempt: !NO_PREEMPT, rule: pitch, early: false },
              ]
            : [{ label: NO_PREEMPT ? 'no preemption' : 'preemptive', preempt: !NO_PREEMPT, rule: pitch, early }];
    // Ways that differ in the listener (pitch, recogniser) need a conversation each; preemption is per turn.
    const conversationOf = (w: Way) => `${JSON.stringify(w.rule)}/${w.early}`;
    const conversations = new Map<string, { id: string; page: Page }>();
    for (const way of ways) {
      if (conversations.has(conversationOf(way))) continue;
      const c = await openConversation(t, agent);
      const live = t.context.conversationLoop.get(c.id)!;
      endOfTurnRule(live, way.rule);
      if (!way.early) wordsAtEnd(live);
      live.preemptive = way.preempt;
      await c.page.turn(clips[0]); // warm-up (VAD session, decoder, flite)
      conversations.set(conversationOf(way), c);
    }
    const modes = ways.map((w) => w.label);
    const runs = new Map(modes.map((on) => [on, { voiceToVoice: [] as number[], steps: [] as Array<Record<string, number | null>>, cpuMs: 0, turns: 0 }]));
    const preemptiveStats = t.context.conversationLoop.preemptiveStats;
    const stats0 = preemptiveStats.snapshot();
    const loadBefore = load();
    const turnsPlayed = new Map<string, number>();
    for (let i = 0; i < TURNS; i++) {
      // --compare, --compare-turn-taking: turns go in pairs, the same clip once each way.
      const way = ways[i % ways.length];
      const on = way.label;
      const clip = clips[Math.floor(i / ways.length) % clips.length];
      const { id, page } = conversations.get(conversationOf(way))!;
      const live = t.context.conversationLoop.get(id)!;
      live.preemptive = way.preempt;
      const run = runs.get(on)!;
      const cpu = process.cpuUsage();
      const { voiceToVoice } = await page.turn(clip);
      const used = process.cpuUsage(cpu);
      run.cpuMs += (used.user + used.system) / 1000;
      run.turns++;
      run.voiceToVoice.push(voiceToVoice);
      // One line per turn, so a run stopped early (a loaded machine) still tells what it measured.
      const turnsHere = (turnsPlayed.get(id) ?? 1) + 1;
      turnsPlayed.set(id, turnsHere);
      const w = (await waterfalls(t, id, turnsHere)).at(-1)!;
      run.steps.push(w);
      console.error(`turn ${i + 1} (${on}, ${clip.name}): voice-to-voice ${ms(voiceToVoice)} ms; waterfall ${JSON.stringify(w)}; load ${load()}`);
    }
    for (const c of conversations.values()) c.page.socket.close();
    const stats = preemptiveStats.snapshot();
    const discarded = Object.values(stats.discarded).reduce((a, b) => a + b, 0) - Object.values(stats0.discarded).reduce((a, b) => a + b, 0);
    console.log(`## One visitor, ${TURNS} turns (load average before: ${loadBefore}; after: ${load()})\n`);
    const label = (on: string) => on;
    console.log(`| step (p50 / p95 ms) | ${modes.map(label).join(' | ')} |`);
    console.log(`|---|${modes.map(() => '---:').join('|')}|`);
    const row = (name: string, of: (steps: Array<Record<string, number | null>>, run: { voiceToVoice: number[] }) => number[]) =>
      console.log(
        `| ${name} | ${modes
          .map((on) => {
            const v = of(runs.get(on)!.steps, runs.get(on)!);
            return `${ms(pct(v, 0.5))} / ${ms(pct(v, 0.95))}`;
          })
          .join(' | ')} |`,
      );
    const col = (steps: Array<Record<string, number | null>>, key: string) => steps.map((w) => (typeof w[key] === 'number' ? (w[key] as number) : NaN));
    const diff = (steps: Array<Record<string, number | null>>, a: string, b: string) => col(steps, a).map((x, i) => x - col(steps, b)[i]);
    row('end of turn (silence wait after the last voiced frame)', (s) => col(s, 'end_of_turn'));
    row('recognition left after the turn ended', (s) => diff(s, 'recognised', 'end_of_turn'));
    row('answer prepared from (after the last voiced frame; kept answers only)', (s) => col(s, 'prepared'));
    row('first text, from the last voiced frame', (s) => col(s, 'first_text'));
    row('first audio leaves, after the transcript', (s) => diff(s, 'first_audio', 'recognised'));
    row('**server waterfall: last voiced frame → first audio**', (s) => col(s, 'first_audio'));
    row('**voice-to-voice at the page: last word → first answer audio arrives**', (_, r) => r.voiceToVoice);
    console.log(
      `| turns measured | ${modes.map((on) => `${runs.get(on)!.voiceToVoice.filter(Number.isFinite).length} of ${runs.get(on)!.turns}`).join(' | ')} |`,
    );
    console.log(
      `| answers prepared ahead and kept | ${modes.map((on) => `${runs.get(on)!.steps.filter((w) => typeof w.prepared === 'number').length}`).join(' | ')} |`,
    );
    console.log(
      `| process CPU per turn (server and this page; decoders excluded) | ${modes.map((on) => `${ms(runs.get(on)!.cpuMs / Math.max(1, runs.get(on)!.turns))} ms`).join(' | ')} |`,
    );
    console.log(
      `\nPreemptive generation: ${stats.started - stats0.started} answers prepared, ${stats.kept - stats0.kept} kept, ${discarded} thrown away ` +
        `(visitor went on: ${stats.discarded.resumed - stats0.discarded.resumed}, other words at the end: ${stats.discarded.mismatch - stats0.discarded.mismatch}, other: ${stats.discarded.other - stats0.discarded.other}); ` +
        `work thrown away: ${ms(stats.discardedWorkMs - stats0.discardedWorkMs)} ms wall clock (engine + speech until the held first audio)\n`,
    );
    const gaps = await t.database.db.selectFrom('knowledge_gaps').select(['times_asked']).where('agent_id', '=', agent).execute();
    const ids = [...conversations.values()].map((c) => c.id);
    const unknown = (await t.database.db.selectFrom('conversation_turns').select(['details']).where('conversation_id', 'in', ids).execute()).filter(
      (r) => (r.details as any).gap_id !== undefined,
    ).length;
    console.log(
      `Knowledge gaps: asked ${gaps.reduce((a, g) => a + g.times_asked, 0)} times, answers that recorded one: ${unknown} (equal: nothing was recorded for an answer thrown away)\n`,
    );

    // ---- 2. talking visitors at once
    if (MAX_VISITORS < 1) return;
    console.log(`## Talking visitors at once (${TURNS_PER_VISITOR} turns each, back to back)\n`);
    console.log('| visitors | voice-to-voice p50 ms | p95 ms | × one visitor | load average |');
    console.log('|---|---|---|---|---|');
    let base = NaN;
    let carried = 0;
    for (const visitors of [1, 2, 4, 6, 8, 10, 12, 16, 20].filter((n) => n <= MAX_VISITORS)) {
      const conversations = await Promise.all(Array.from({ length: visitors }, () => openConversation(t, agent)));
      for (const c of conversations) {
        const live = t.context.conversationLoop.get(c.id)!;
        live.preemptive = !NO_PREEMPT;
        if (NO_PITCH) endOfTurnRule(live, BEFORE_PITCH);
        if (WORDS_AT_END) wordsAtEnd(live);
      }
      const results: number[] = [];
      await Promise.all(
        conversations.map(async ({ page }, v) => {
          await new Promise((r) => setTimeout(r, (v * 700) % 3000)); // visitors do not all start on the same frame
          for (let k = 0; k < TURNS_PER_VISITOR; k++) results.push((await page.turn(clips[(v + k) % clips.length])).voiceToVoice);
          page.socket.close();
        }),
      );
      for (const c of conversations) await t.request('POST', `/v1/sessions/${c.id}/stop`);
      const p50 = pct(results, 0.5);
      if (visitors === 1) base = p50;
      const ratio = p50 / base;
      console.log(`| ${visitors} | ${ms(p50)} | ${ms(pct(results, 0.95))} | ${ratio.toFixed(2)} | ${load()} |`);
      if (ratio >= 2) break;
      carried = visitors;
    }
    console.log(`\nvisitors carried before the p50 doubled: ${carried}${carried === MAX_VISITORS ? ' (the largest level tried)' : ''}`);
  } finally {
    await t.close();
  }
}

await main();
process.exit(0);
