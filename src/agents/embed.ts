/**
 * Embed configuration: what a website needs to show an agent. The script snippet loads
 * `/embed.js`, which draws a button and, when the visitor opens it, asks Presence (by the public
 * embed key, from an allowed origin) for a conversation session and shows its player_url in a frame.
 */
import { randomToken } from '../core/secrets.js';

export interface EmbedSettings {
  embed_key: string;
  allowed_origins: string[];
  position: 'bottom-right' | 'bottom-left' | 'inline';
  button_text: string;
  primary_color: string;
  auto_open: boolean;
  width: number;
  height: number;
  updated_at: string;
}

/** Settings copied by apply-to-all: everything but the agent's own key. */
export const SHARED_EMBED_FIELDS = ['allowed_origins', 'position', 'button_text', 'primary_color', 'auto_open', 'width', 'height'] as const;

export const newEmbedKey = () => randomToken('pk_', 18);

export function defaultEmbed(): EmbedSettings {
  return {
    embed_key: newEmbedKey(),
    allowed_origins: [],
    position: 'bottom-right',
    button_text: 'Talk to us',
    primary_color: '#2f6fed',
    auto_open: false,
    width: 400,
    height: 600,
    updated_at: new Date().toISOString(),
  };
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function embedSnippets(publicUrl: string, embed: EmbedSettings): { script_snippet: string; iframe_snippet: string } {
  return {
    script_snippet:
      `<script src="${publicUrl}/embed.js" data-embed-key="${embed.embed_key}" data-position="${embed.position}" ` +
      `data-button-text="${escapeAttr(embed.button_text)}" data-color="${embed.primary_color}" async></script>`,
    iframe_snippet:
      `<iframe src="PLAYER_URL" width="${embed.width}" height="${embed.height}" allow="microphone; autoplay" ` +
      `style="border:0;border-radius:12px" title="Presence avatar"></iframe>`,
  };
}
