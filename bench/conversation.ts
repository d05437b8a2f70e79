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
 * 2. Talking visitors: 1, 2, 4, 6, 8… conversations at once, each taking turns back to back; the
 *    voice-to-voice p50 at each level, until it is twice the single visitor's.
 *
 *   node --import tsx bench/conversation.ts [--turns 30] [--max-visitors 12] [--turns-per-visitor 3] [--whole-turns]
 *
 * The numbers depend on the machine's load: the load average is printed beside them.
 */
import os from 'node:os';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../test/support/app.js';
import { cards, concat, librivox, silence, speechSpan, testdataInstalled, type Recording } from '../test/recognition/recordings.js';
import { SHOP_PROMPT } from '../test/conversation/support.js';
import { PocketsphinxRecognizer } from '../src/speech/recognition/pocketsphinx.js';
import { MIC_CHUNK } from '../src/player/client/mic-worklet.js';
import { decodeFrame } from '../src/realtime/frame-codec.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const TURNS = arg('--turns', 30);
const MAX_VISITORS = arg('--max-visitors', 12);
const TURNS_PER_VISITOR = arg('--turns-per-visitor', 3);
/** Recognise each turn whole after it ended (how pocketsphinx worked before it decoded live), for a before/after. */
const WHOLE_TURNS = args.includes('--whole-turns');

/** The player page's microphone frame (mic-worklet.ts): 20 ms at 16 kHz. */
const MIC_FRAME = MIC_CHUNK;

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
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
      if (lastWordSample >= i && lastWordSample < i + piece.length) lastWordAt = performance.now() - ((i + piece.length - lastWordSample) / 16);
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
    const { id, page } = await openConversation(t, agent);
    await page.turn(clips[0]); // warm-up (VAD session, decoder, flite)
    const measured: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      measured.push((await page.turn(clips[i % clips.length])).voiceToVoice);
      // One line per turn, so a run stopped early (a loaded machine) still tells what it measured.
      const w = (await waterfalls(t, id, i + 2)).at(-1);
      console.error(`turn ${i + 1}: voice-to-voice ${ms(measured[i])} ms; waterfall ${JSON.stringify(w)}; load ${load()}`);
    }
    page.socket.close();
    const steps = (await waterfalls(t, id, TURNS + 1)).slice(1);
    const column = (key: string) => steps.map((w) => w[key] as number);
    const eot = column('end_of_turn');
    const rec = column('recognised').map((x, i) => x - eot[i]);
    const text = column('first_text').map((x, i) => x - column('recognised')[i]);
    const audio = column('first_audio').map((x, i) => x - column('first_text')[i]);
    console.log(`## One visitor, ${TURNS} turns (load average after: ${load()})\n`);
    console.log('| step | p50 ms | p95 ms |');
    console.log('|---|---|---|');
    console.log(`| end of turn (silence wait after the last voiced frame) | ${ms(pct(eot, 0.5))} | ${ms(pct(eot, 0.95))} |`);
    console.log(`| recognition left after the turn ended | ${ms(pct(rec, 0.5))} | ${ms(pct(rec, 0.95))} |`);
    console.log(`| answering engine: first text | ${ms(pct(text, 0.5))} | ${ms(pct(text, 0.95))} |`);
    console.log(`| speech: first audio leaves toward the page | ${ms(pct(audio, 0.5))} | ${ms(pct(audio, 0.95))} |`);
    console.log(`| **server waterfall: last voiced frame → first audio** | ${ms(pct(column('first_audio'), 0.5))} | ${ms(pct(column('first_audio'), 0.95))} |`);
    console.log(`| **voice-to-voice at the page: last word → first answer audio arrives** | ${ms(pct(measured, 0.5))} | ${ms(pct(measured, 0.95))} |`);
    console.log(`\nturns measured: ${measured.filter(Number.isFinite).length} of ${TURNS} (a turn the recogniser heard as nothing gets no answer)\n`);

    // ---- 2. talking visitors at once
    console.log(`## Talking visitors at once (${TURNS_PER_VISITOR} turns each, back to back)\n`);
    console.log('| visitors | voice-to-voice p50 ms | p95 ms | × one visitor | load average |');
    console.log('|---|---|---|---|---|');
    let base = NaN;
    let carried = 0;
    for (const visitors of [1, 2, 4, 6, 8, 10, 12, 16, 20].filter((n) => n <= MAX_VISITORS)) {
      const conversations = await Promise.all(Array.from({ length: visitors }, () => openConversation(t, agent)));
      const results: number[] = [];
      await Promise.all(conversations.map(async ({ page }, v) => {
        await new Promise((r) => setTimeout(r, (v * 700) % 3000)); // visitors do not all start on the same frame
        for (let k = 0; k < TURNS_PER_VISITOR; k++) results.push((await page.turn(clips[(v + k) % clips.length])).voiceToVoice);
        page.socket.close();
      }));
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
