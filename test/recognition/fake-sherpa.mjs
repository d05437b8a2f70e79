// Stands in for sherpa-onnx-node's OnlineRecognizer in the sherpa model process (tests only: no
// streaming model can be downloaded here). Same calls as the native one; it "hears" one more word of
// WORDS per half second of audio, decoding in 100 ms chunks as a streaming transducer does.
const WORDS = ['how', 'much', 'is', 'shipping', 'to', 'berlin'];
const CHUNK = 1600;

export class OnlineRecognizer {
  constructor(config) {
    if (!config?.modelConfig?.transducer?.encoder) throw new Error('no transducer in the configuration');
  }
  createStream() {
    let received = 0;
    let finished = false;
    return {
      decoded: 0,
      acceptWaveform({ samples, sampleRate }) {
        if (sampleRate !== 16000 || !(samples instanceof Float32Array)) throw new Error('16 kHz Float32Array expected');
        if (!finished) received += samples.length;
      },
      inputFinished() {
        finished = true;
      },
      get received() {
        return received;
      },
    };
  }
  isReady(stream) {
    return stream.received - stream.decoded >= CHUNK;
  }
  decode(stream) {
    stream.decoded += CHUNK;
  }
  getResult(stream) {
    return {
      text: WORDS.slice(0, Math.min(WORDS.length, Math.floor(stream.decoded / 8000)))
        .join(' ')
        .toUpperCase(),
    };
  }
}

/** Loads (so the non-streaming kinds start); decodes nothing. */
export class OfflineRecognizer {
  createStream() {
    return { acceptWaveform() {} };
  }
  decode() {}
  getResult() {
    return { text: '' };
  }
}
