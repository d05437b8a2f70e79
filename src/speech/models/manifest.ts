/**
 * What the first start fetches when no speech engine is configured: a streaming English
 * recogniser for sherpa-onnx and the Kokoro-82M voice model, each file pinned by size and SHA-256
 * at a fixed upstream revision (docs/decisions.md says where each sum comes from).
 *
 * A file whose bytes do not match its pin is refused: the service keeps its offline engines.
 */

export interface ModelFile {
  /** Path inside the model's folder (and, under `source`, inside the upstream repository). */
  path: string;
  bytes: number;
  sha256: string;
}

export interface ModelSpec {
  /** `stt` (speech recognition) or `kokoro` (the voice). */
  id: 'stt' | 'kokoro';
  /** What the log and /readyz call it. */
  title: string;
  /** Folder under DATA_DIR/models. */
  folder: string;
  /** Files are fetched from `<source>/<path>`. */
  source: string;
  files: ModelFile[];
}

/** Where the files are published; MODELS_BASE_URL replaces it (a mirror with the same layout). */
export const MODELS_DEFAULT_BASE = 'https://huggingface.co';

const ZIPFORMER_REPO = 'csukuangfj/sherpa-onnx-streaming-zipformer-en-2023-06-26';
const ZIPFORMER_REVISION = '672fbf1b30579d6585301139bb363f42a0ad4a24';
const KOKORO_REPO = 'onnx-community/Kokoro-82M-v1.0-ONNX';
const KOKORO_REVISION = '1939ad2a8e416c0acfeecc08a694d14ef25f2231';

/** The pinned models, fetched from `base` (a mirror keeps the `<repo>/resolve/<revision>/<path>` layout). */
export function pinnedModels(base = MODELS_DEFAULT_BASE): ModelSpec[] {
  const root = base.replace(/\/+$/, '');
  return [
    {
      id: 'stt',
      title: 'speech recognition model (sherpa-onnx streaming Zipformer, English)',
      // "streaming" in the folder name tells describeModelFolder it is a streaming transducer.
      folder: 'sherpa-onnx-streaming-zipformer-en-2023-06-26',
      source: `${root}/${ZIPFORMER_REPO}/resolve/${ZIPFORMER_REVISION}`,
      files: [
        {
          path: 'encoder-epoch-99-avg-1-chunk-16-left-128.int8.onnx',
          bytes: 71_083_163,
          sha256: '563fde436d16cf7607cf408cd6b30909819d03162652ef389c2450ced3f45ac1',
        },
        { path: 'decoder-epoch-99-avg-1-chunk-16-left-128.onnx', bytes: 2_092_621, sha256: '7bf787f90b194b307e5a4ad6a34fadb4e748304c35f78a8d66358a05b13ee6ef' },
        {
          path: 'joiner-epoch-99-avg-1-chunk-16-left-128.int8.onnx',
          bytes: 259_335,
          sha256: 'd944208d660d67c8d72cd2acaeac971fa5ceb8c80e76c1968148846fedd6e297',
        },
        { path: 'tokens.txt', bytes: 5_048, sha256: '49e3c2646595fd907228b3c6787069658f67b17377c60aeb8619c4551b2316fb' },
      ],
    },
    {
      id: 'kokoro',
      title: 'voice model (Kokoro-82M, 8-bit)',
      // Laid out as the upstream repository is, which is what KOKORO_MODEL_DIR takes; the voice
      // style files (voices/*.bin) ship inside the kokoro-js package.
      folder: 'Kokoro-82M-v1.0-ONNX',
      source: `${root}/${KOKORO_REPO}/resolve/${KOKORO_REVISION}`,
      files: [
        { path: 'config.json', bytes: 44, sha256: 'df34b4f930b23447cd4dc410fabfb42eb3f24e803e6c3f97d618fb359380a36f' },
        { path: 'tokenizer.json', bytes: 3_497, sha256: '77a02c8e164413299b4b4c403b14f8e0e1c1b727db4d46a09d6327b861060a34' },
        { path: 'tokenizer_config.json', bytes: 113, sha256: 'be1cb066d6ef6b074b3f15e6a6dd21ac88ff3cdaedf325f0aaed686c70f75d20' },
        { path: 'onnx/model_quantized.onnx', bytes: 92_361_116, sha256: 'fbae9257e1e05ffc727e951ef9b9c98418e6d79f1c9b6b13bd59f5c9028a1478' },
      ],
    },
  ];
}

export function totalBytes(spec: ModelSpec): number {
  return spec.files.reduce((sum, f) => sum + f.bytes, 0);
}
