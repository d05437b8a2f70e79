/**
 * Picks the speech recogniser from configuration and says once, in the log, which one hears
 * visitors (or why none does: then visitors can still type).
 *
 * STT_ENGINE=auto takes the first that is configured: Deepgram (DEEPGRAM_API_KEY), an
 * OpenAI-compatible endpoint (STT_URL or STT_API_KEY), a sherpa-onnx model (STT_MODEL_DIR or
 * STT_DOWNLOAD=1), then Debian's pocketsphinx when installed. A configured local model that fails to
 * load is logged as an error and the next engine is used.
 */
import path from 'node:path';
import type { Config } from '../../core/config.js';
import { DeepgramRecognizer } from './deepgram.js';
import { OpenAiRecognizer } from './openai.js';
import { PocketsphinxRecognizer, pocketsphinxMissing } from './pocketsphinx.js';
import { downloadSherpaModel, SherpaRecognizer } from './sherpa.js';
import type { Recognizer } from './types.js';

export type { Recognizer, Transcript, RecognitionStream, RecognitionOptions } from './types.js';
export { RECOGNITION_SAMPLE_RATE } from './types.js';
export { RecognitionError } from './errors.js';
export { SherpaRecognizer } from './sherpa.js';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * `fetchedModelDir`: the streaming model the first start fetched into DATA_DIR/models
 * (src/speech/models), used like STT_MODEL_DIR when the operator configured no other engine.
 */
export async function createRecognizer(config: Pick<Config, 'recognition' | 'dataDir'>, log: Log, fetchedModelDir?: string): Promise<Recognizer | undefined> {
  const r = config.recognition;
  const wants = (engine: typeof r.engine) => r.engine === engine || r.engine === 'auto';

  if (r.engine === 'none') {
    log.info({ engine: 'none' }, 'speech recognition: off (STT_ENGINE=none); visitors can type');
    return undefined;
  }
  if (wants('deepgram') && r.deepgramApiKey) {
    log.info({ engine: 'deepgram', model: r.deepgramModel }, `speech recognition: Deepgram (${r.deepgramModel}, streaming)`);
    return new DeepgramRecognizer({ apiKey: r.deepgramApiKey, baseUrl: r.deepgramUrl, model: r.deepgramModel });
  }
  if (wants('openai') && (r.url || r.apiKey)) {
    log.info({ engine: 'openai', model: r.model }, `speech recognition: OpenAI-compatible endpoint ${r.url ?? '(OpenAI)'} with ${r.model}`);
    return new OpenAiRecognizer({ baseUrl: r.url, apiKey: r.apiKey, model: r.model });
  }
  if (wants('sherpa-onnx') && (r.modelDir || r.download || fetchedModelDir)) {
    const began = Date.now();
    try {
      const folder =
        r.modelDir ?? (r.download ? await downloadSherpaModel(path.join(config.dataDir, 'models', 'stt'), r.downloadModel, r.downloadUrl) : fetchedModelDir!);
      const recognizer = await SherpaRecognizer.load(folder, r.modelDir || r.download ? r.modelType : undefined);
      const from = r.modelDir ? 'STT_MODEL_DIR' : r.download ? 'the download cache' : folder;
      log.info(
        { engine: 'sherpa-onnx', kind: recognizer.model.kind, ms: Date.now() - began },
        `speech recognition: sherpa-onnx ${recognizer.model.kind} model from ${from}`,
      );
      return recognizer;
    } catch (error) {
      log.error(
        { engine: 'sherpa-onnx', err: (error as Error).message },
        `speech recognition: the sherpa-onnx model could not be used: ${(error as Error).message}`,
      );
    }
  }
  if (wants('pocketsphinx')) {
    const missing = pocketsphinxMissing();
    if (!missing) {
      log.warn(
        { engine: 'pocketsphinx' },
        'speech recognition: Debian pocketsphinx, the zero-set-up fallback (English only, poor accuracy); set STT_MODEL_DIR or STT_DOWNLOAD=1 for a sherpa-onnx model, or STT_URL/DEEPGRAM_API_KEY',
      );
      return new PocketsphinxRecognizer(undefined, r.concurrency);
    }
    log.warn(
      { engine: 'none' },
      `speech recognition: none (${missing}; no STT_MODEL_DIR, STT_DOWNLOAD, STT_URL, STT_API_KEY or DEEPGRAM_API_KEY); visitors can type`,
    );
    return undefined;
  }
  log.warn({ engine: 'none' }, `speech recognition: none (STT_ENGINE=${r.engine} is not configured); visitors can type`);
  return undefined;
}
