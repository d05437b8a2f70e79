/**
 * @presence/sdk: a typed REST client for the Presence API (generated from its OpenAPI document)
 * and RenderSession, a client for a render-mode session's WebSocket, with audio helpers.
 */
export {
  createPresenceClient,
  type PresenceClient,
  type PresenceClientOptions,
  type Schemas,
  type paths,
  type components,
  type PathsWith,
  type ResponseOf,
} from './client.js';
export {
  PresenceApiError,
  RenderSocketClosedError,
  RenderConnectTimeoutError,
  RenderCommandError,
  RenderAckTimeoutError,
  SpeakInterruptedError,
  type ErrorDetail,
  type ValidationIssue,
} from './errors.js';
export {
  RenderSession,
  Utterance,
  toBase64,
  type RenderSessionOptions,
  type RenderSessionEvents,
  type ReconnectOptions,
  type SpeakOptions,
  type UtteranceOutcome,
  type WebSocketLike,
  type WebSocketConstructor,
} from './render-session.js';
export {
  CloseCodes,
  isReconnectable,
  SAMPLE_RATES,
  DEFAULT_SAMPLE_RATE,
  MAX_FRAME_BYTES,
  COMMAND_TYPES,
  EVENT_TYPES,
  type RenderEvent,
  type RenderEventOf,
  type RenderEventType,
  type RenderCommand,
  type RenderCommandType,
  type Cue,
  type CameraChoice,
  type Stage,
  type AvatarState,
  type SampleRate,
} from './protocol.js';
export {
  Resampler,
  resample,
  toPcm16,
  int16ToFloat32,
  float32ToInt16,
  int16ToBytes,
  bytesToInt16,
  bytesToFloat32,
  audioChunks,
  convertStream,
  type AudioChunk,
  type AudioSource,
  type ConvertStreamOptions,
} from './audio.js';
export { pipeAudio, type PipeAudioOptions } from './pipe.js';
export { Emitter, type Listener } from './emitter.js';
