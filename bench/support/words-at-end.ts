/**
 * pocketsphinx as it was before its words came in the visitor's pause, for before/after runs:
 * no decoder started ahead (each turn loads its model), no pause told to it, and no settled
 * words (every turn waits for the decoder's exit). docs/decisions.md, "Its words in the pause".
 */
import { PocketsphinxRecognizer } from '../../src/speech/recognition/pocketsphinx.js';
import type { Recognizer } from '../../src/speech/recognition/types.js';

export function wordsAtEndRecognizer(concurrency = 2): Recognizer {
  const decoders = new PocketsphinxRecognizer(undefined, concurrency, 0);
  return {
    name: decoders.name,
    transcribe: (pcm, options) => decoders.transcribe(pcm, options),
    stream: (options) => {
      const stream = decoders.stream(options);
      return stream && Object.assign(stream, { pause: undefined, settled: undefined });
    },
    close: () => decoders.close(),
  };
}
