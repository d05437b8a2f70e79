// Child process that runs sherpa-onnx (the parent is src/speech/recognition/sherpa.ts).
// sherpa-onnx aborts the whole process on a broken model file (an uncaught C++ exception), so it
// never runs inside the server: a bad model folder ends this child, and the server says why.
// Messages (advanced serialisation, typed arrays travel as such):
//   in:  { type: 'load', config, kind, module? }   { type: 'transcribe', id, samples: Float32Array, language }
//        streaming transducers, one visitor turn live: { type: 'open', id }   { type: 'audio', id, samples }
//        { type: 'finish', id }   { type: 'abort', id }
//   out: { type: 'ready' }   { type: 'result', id, text, lang }   { type: 'partial', id, text }   { type: 'failed', id?, message }
// `module` (tests only) names a file to load instead of sherpa-onnx-node, with the same classes.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
let recognizer;
let kind;
/** Live turns by id: the stream, the last text sent and the audio since (samples). */
const live = new Map();
/**
 * Unchanged words go up again after this much audio (0.3 s), as Deepgram repeats its interim
 * results: during the visitor's pause they are the turn's words for the answer prepared ahead.
 */
const REPEAT_SAMPLES = 4800;

function decodeLive(turn) {
  while (recognizer.isReady(turn.stream)) recognizer.decode(turn.stream);
  return String(recognizer.getResult(turn.stream).text ?? '').trim();
}

function transcribe(samples) {
  if (kind === 'streaming-transducer') {
    const stream = recognizer.createStream();
    stream.acceptWaveform({ samples, sampleRate: 16000 });
    // Tail padding lets the model emit the last word.
    stream.acceptWaveform({ samples: new Float32Array(16000 * 0.3), sampleRate: 16000 });
    stream.inputFinished();
    while (recognizer.isReady(stream)) recognizer.decode(stream);
    return recognizer.getResult(stream);
  }
  const stream = recognizer.createStream();
  stream.acceptWaveform({ samples, sampleRate: 16000 });
  recognizer.decode(stream);
  return recognizer.getResult(stream);
}

process.on('message', async (message) => {
  try {
    if (message.type === 'load') {
      const sherpa = message.module ? await import(pathToFileURL(message.module).href) : require('sherpa-onnx-node');
      kind = message.kind;
      recognizer = kind === 'streaming-transducer' ? new sherpa.OnlineRecognizer(message.config) : new sherpa.OfflineRecognizer(message.config);
      process.send({ type: 'ready' });
    } else if (message.type === 'transcribe') {
      const result = transcribe(message.samples);
      process.send({ type: 'result', id: message.id, text: String(result.text ?? ''), lang: result.lang ?? result.language ?? '' });
    } else if (message.type === 'open') {
      live.set(message.id, { stream: recognizer.createStream(), text: '', since: 0 });
    } else if (message.type === 'audio') {
      const turn = live.get(message.id);
      if (!turn) return;
      turn.stream.acceptWaveform({ samples: message.samples, sampleRate: 16000 });
      const text = decodeLive(turn);
      turn.since += message.samples.length;
      if (text && (text !== turn.text || turn.since >= REPEAT_SAMPLES)) {
        turn.text = text;
        turn.since = 0;
        process.send({ type: 'partial', id: message.id, text });
      }
    } else if (message.type === 'finish') {
      const turn = live.get(message.id);
      live.delete(message.id);
      if (!turn) throw new Error('no such live turn');
      // Tail padding lets the model emit the last word.
      turn.stream.acceptWaveform({ samples: new Float32Array(16000 * 0.3), sampleRate: 16000 });
      turn.stream.inputFinished();
      process.send({ type: 'result', id: message.id, text: decodeLive(turn), lang: '' });
    } else if (message.type === 'abort') {
      live.delete(message.id);
    }
  } catch (error) {
    process.send({ type: 'failed', id: message.id, message: String(error?.message ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
