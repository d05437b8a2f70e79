/**
 * A real listener (Silero VAD, the end-of-turn rule, a recogniser) fed recorded audio in 20 ms
 * chunks (what the player page sends) on a virtual clock, faster than real time, with what it
 * reported: turns, barge-ins (and the pauses that precede them, and resumes), speech starts, errors.
 */
import { VisitorListener, type ListenerOptions } from '../../../src/conversation/listening/index.js';
import type { VisitorTurnHeard } from '../../../src/conversation/listening/types.js';
import { PocketsphinxRecognizer } from '../../../src/speech/recognition/pocketsphinx.js';
import type { Recognizer } from '../../../src/speech/recognition/types.js';

export const CHUNK = 320; // 20 ms

interface Heard {
  turns: VisitorTurnHeard[];
  bargeIns: number[];
  /** When the agent was paused (`bargeInStarted`) and resumed (`bargeInDropped`), on the virtual clock. */
  pauses: number[];
  resumes: number[];
  started: number;
  errors: Error[];
}

export function listen(options: ListenerOptions = {}, recognizer: Recognizer = new PocketsphinxRecognizer()) {
  const heard: Heard = { turns: [], bargeIns: [], pauses: [], resumes: [], started: 0, errors: [] };
  let clock = 1000;
  const listener = new VisitorListener(
    recognizer,
    {
      speechStarted: () => heard.started++,
      bargeIn: () => heard.bargeIns.push(clock),
      bargeInStarted: () => heard.pauses.push(clock),
      bargeInDropped: () => heard.resumes.push(clock),
      turn: (turn) => heard.turns.push(turn),
      error: (error) => heard.errors.push(error),
    },
    { now: () => clock, ...options },
  );
  /** Pushes the microphone audio; `agent` is what the agent says over the same stretch (sent as it plays). */
  async function play(mic: Int16Array, agent?: Int16Array) {
    for (let i = 0; i < mic.length; i += CHUNK) {
      const end = Math.min(mic.length, i + CHUNK);
      clock += ((end - i) * 1000) / 16000;
      if (agent && i < agent.length) listener.agentAudio(agent.subarray(i, Math.min(agent.length, end)), 16000, clock - ((end - i) * 1000) / 16000);
      listener.push(mic.slice(i, end), clock);
      // Let the VAD keep up with the pushes, as it does in real time.
      if ((i / CHUNK) % 8 === 0) await listener.idle();
    }
    await listener.idle();
  }
  return { listener, heard, play, now: () => clock };
}
