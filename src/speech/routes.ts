/**
 * GET /v1/voices/{provider}                       voices of a provider, filtered by language and gender
 * GET /v1/voices/{provider}/{voice_id}/preview    a short spoken sample (audio/wav), cached
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { routeErrors, type ApiError } from '../core/errors.js';
import { PROVIDERS } from './voices/catalog.js';
import { SpeechError } from './errors.js';
import type { SpeechService } from './synthesis.js';
import { PreviewCache, previewText } from './voice-samples.js';
import { speechErrors } from './errors.js';

export interface VoiceRouteDeps {
  speech: SpeechService;
  /** Where previews are kept on disk (DATA_DIR). */
  dataDir: string;
  previews?: PreviewCache;
}

const Language = z.string().regex(/^[a-z]{2}$/, 'Use a base ISO 639-1 code such as "en"');

export const VoiceSchema = z
  .object({
    voice_id: z.string(),
    name: z.string(),
    gender: z.enum(['f', 'm']),
    language: z.string().describe('Base ISO 639-1 code'),
    locale: z.string().describe('Regional variant, e.g. en-US'),
    premium: z.boolean(),
    provider: z.string(),
    preview_url: z.string().describe('URL path of a short spoken sample (audio/wav)'),
  })
  .meta({ id: 'Voice' });

const ProviderParams = z.object({ provider: z.string().describe(`One of ${PROVIDERS.join(', ')}`) });
const VoiceParams = ProviderParams.extend({ voice_id: z.string().min(1).max(200) });
const ListQuery = z.object({
  language: Language.optional(),
  gender: z
    .string()
    .regex(/^[fm]$/, 'gender must be "f" or "m"')
    .optional(),
});
const PreviewQuery = z.object({ language: Language.optional() });

function unknownProvider(provider: string): ApiError {
  return speechErrors.unknown_provider(`Unknown voice provider "${provider}". Known providers: ${PROVIDERS.join(', ')}.`);
}

export function voiceRoutes(server: FastifyInstance, deps: VoiceRouteDeps): PreviewCache {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { speech } = deps;
  const previews = deps.previews ?? new PreviewCache(speech, deps.dataDir);
  const tags = ['Voices'];

  app.get(
    '/v1/voices/:provider',
    {
      config: routeErrors(speechErrors.unknown_provider),
      schema: { tags, summary: 'List the voices of a provider', params: ProviderParams, querystring: ListQuery, response: { 200: z.array(VoiceSchema) } },
    },
    async (request) => {
      const { provider } = request.params;
      if (!(PROVIDERS as readonly string[]).includes(provider)) throw unknownProvider(provider);
      await speech.freshVoices(provider);
      const { language, gender } = request.query;
      return (speech.voices.list(provider) ?? [])
        .filter((v) => (!language || v.language === language) && (!gender || v.gender === gender))
        .map((v) => ({
          voice_id: v.voice_id,
          name: v.name,
          gender: v.gender,
          language: v.language,
          locale: v.locale,
          premium: v.premium,
          provider,
          preview_url: `/v1/voices/${encodeURIComponent(provider)}/${encodeURIComponent(v.voice_id)}/preview`,
        }));
    },
  );

  app.get(
    '/v1/voices/:provider/:voice_id/preview',
    {
      config: routeErrors(speechErrors.unknown_provider, speechErrors.unknown_voice, speechErrors.tts_error),
      schema: {
        tags,
        summary: 'A short spoken sample of a voice (audio/wav), in the requested language where the voice speaks it',
        params: VoiceParams,
        querystring: PreviewQuery,
      },
    },
    async (request, reply) => {
      const { provider, voice_id } = request.params;
      if (!(PROVIDERS as readonly string[]).includes(provider)) throw unknownProvider(provider);
      const voice = speech.voices.find(provider, voice_id);
      if (!voice) throw speechErrors.unknown_voice(`Provider "${provider}" has no voice "${voice_id}".`);
      // A voice speaks its own language; other languages are honoured by the multilingual premium voices.
      const multilingual = voice.premium && provider !== 'cartesia';
      const language = request.query.language && (request.query.language === voice.language || multilingual) ? request.query.language : voice.language;
      try {
        const { wav, cached, engine } = await previews.get(provider, voice_id, voice.name, language);
        return reply
          .type('audio/wav')
          .header('cache-control', 'public, max-age=86400')
          .header('x-preview-language', previewText(voice.name, language).language)
          .header('x-speech-engine', engine)
          .header('x-cache', cached ? 'hit' : 'miss')
          .send(wav);
      } catch (error) {
        if (error instanceof SpeechError) {
          request.log.warn({ provider, code: error.code }, `voice preview failed: ${error.message}`);
          throw speechErrors.tts_error(`The ${provider} voice could not be synthesised: ${error.message}`);
        }
        throw error;
      }
    },
  );

  return previews;
}
