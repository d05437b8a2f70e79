/** Every Kokoro-82M (v1.0) voice. Ids follow Kokoro's naming: language letter, gender letter, name. */
export interface CatalogVoice {
  voice_id: string;
  name: string;
  gender: 'f' | 'm';
  /** Base ISO 639-1 code. */
  language: string;
  /** Regional variant, e.g. en-US, en-GB, pt-BR. */
  locale: string;
  premium: boolean;
  provider: string;
}

const LANGUAGE_BY_LETTER: Record<string, [string, string]> = {
  a: ['en', 'en-US'],
  b: ['en', 'en-GB'],
  e: ['es', 'es-ES'],
  f: ['fr', 'fr-FR'],
  h: ['hi', 'hi-IN'],
  i: ['it', 'it-IT'],
  j: ['ja', 'ja-JP'],
  p: ['pt', 'pt-BR'],
  z: ['zh', 'zh-CN'],
};

const IDS = [
  'af_alloy',
  'af_aoede',
  'af_bella',
  'af_heart',
  'af_jessica',
  'af_kore',
  'af_nicole',
  'af_nova',
  'af_river',
  'af_sarah',
  'af_sky',
  'am_adam',
  'am_echo',
  'am_eric',
  'am_fenrir',
  'am_liam',
  'am_michael',
  'am_onyx',
  'am_puck',
  'am_santa',
  'bf_alice',
  'bf_emma',
  'bf_isabella',
  'bf_lily',
  'bm_daniel',
  'bm_fable',
  'bm_george',
  'bm_lewis',
  'ef_dora',
  'em_alex',
  'em_santa',
  'ff_siwis',
  'hf_alpha',
  'hf_beta',
  'hm_omega',
  'hm_psi',
  'if_sara',
  'im_nicola',
  'jf_alpha',
  'jf_gongitsune',
  'jf_nezumi',
  'jf_tebukuro',
  'jm_kumo',
  'pf_dora',
  'pm_alex',
  'pm_santa',
  'zf_xiaobei',
  'zf_xiaoni',
  'zf_xiaoxiao',
  'zf_xiaoyi',
  'zm_yunjian',
  'zm_yunxi',
  'zm_yunxia',
  'zm_yunyang',
];

export const KOKORO_VOICES: CatalogVoice[] = IDS.map((id) => {
  const [language, locale] = LANGUAGE_BY_LETTER[id[0]];
  const raw = id.slice(3);
  return {
    voice_id: id,
    name: raw.charAt(0).toUpperCase() + raw.slice(1),
    gender: id[1] as 'f' | 'm',
    language,
    locale,
    premium: false,
    provider: 'kokoro',
  };
});
