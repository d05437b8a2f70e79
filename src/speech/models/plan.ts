/**
 * Which pinned models to fetch: only where the operator configured no engine of that kind. Operator
 * settings always win (STT_*, DEEPGRAM_*, KOKORO_*), and MODELS_DOWNLOAD=0 turns fetching off.
 */
import type { Config } from '../../core/config.js';
import type { SpeechConfig } from '../synthesis.js';
import type { ModelSpec } from './manifest.js';

export function modelsWanted(
  config: Pick<Config, 'models' | 'recognition'>,
  speech: Pick<SpeechConfig, 'kokoroModelDir' | 'kokoroDownload' | 'kokoroUrl'>,
): Record<ModelSpec['id'], string | true> {
  if (!config.models.download) return { stt: 'MODELS_DOWNLOAD=0', kokoro: 'MODELS_DOWNLOAD=0' };
  const r = config.recognition;
  const stt =
    r.engine !== 'auto' && r.engine !== 'sherpa-onnx'
      ? `STT_ENGINE=${r.engine}`
      : r.modelDir
        ? 'STT_MODEL_DIR is set'
        : r.download
          ? 'STT_DOWNLOAD=1'
          : r.engine === 'auto' && r.deepgramApiKey
            ? 'DEEPGRAM_API_KEY is set'
            : r.engine === 'auto' && (r.url || r.apiKey)
              ? 'STT_URL or STT_API_KEY is set'
              : true;
  const kokoro = speech.kokoroUrl
    ? 'KOKORO_URL is set'
    : speech.kokoroModelDir
      ? 'KOKORO_MODEL_DIR is set'
      : speech.kokoroDownload
        ? 'KOKORO_DOWNLOAD=1'
        : true;
  return { stt, kokoro };
}
