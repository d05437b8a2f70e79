// Child process that runs sherpa-onnx (the parent is src/speech/recognition/sherpa.ts).
// sherpa-onnx aborts the whole process on a broken model file (an uncaught C++ exception), so it
// never runs inside the server: a bad model folder ends this child, and the server says why.
// Messages (advanced serialisation, typed arrays travel as such):
//   in:  { type: 'load', config, kind }   { type: 'transcribe', id, samples: Float32Array, language }
//   out: { type: 'ready' }                { type: 'result', id, text, lang }   { type: 'failed', id?, message }
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let recognizer;
let kind;

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

process.on('message', (message) => {
  try {
    if (message.type === 'load') {
      const sherpa = require('sherpa-onnx-node');
      kind = message.kind;
      recognizer = kind === 'streaming-transducer' ? new sherpa.OnlineRecognizer(message.config) : new sherpa.OfflineRecognizer(message.config);
      process.send({ type: 'ready' });
    } else if (message.type === 'transcribe') {
      const result = transcribe(message.samples);
      process.send({ type: 'result', id: message.id, text: String(result.text ?? ''), lang: result.lang ?? result.language ?? '' });
    }
  } catch (error) {
    process.send({ type: 'failed', id: message.id, message: String(error?.message ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
