/**
 * Who the agent is and whose it is, as knowledge: the agent's name (its `name` field, or the system
 * prompt's "You are Ava"), the business's name (the site's name, the system prompt's "assistant of
 * Bella's Bakery", or the homepage's title), and its town (the system prompt's "… in Springfield").
 * The index turns them into units ("We're Bella's Bakery.", "We're in Springfield."), so "what is
 * the bakery called?" and "which town are you in?" are answered like any other question, and the
 * small talk ("who are you?") names the business even when the site does not.
 */
import type { KnowledgeSnapshot } from '../knowledge/service.js';

export interface Identity {
  agentName: string;
  business?: string;
  town?: string;
}

const NAME_WORD = String.raw`[A-Z0-9][\w'’&.-]*`;
/** "the assistant of Bella's Bakery", "the front-desk assistant at Maple Dental Care", "assistant for Tallybook". */
const BUSINESS = new RegExp(
  String.raw`\b(?:assistant|receptionist|agent|concierge|host|helper|representative|guide|advisor|adviser|voice)\s+(?:of|at|for|from)\s+(?:the\s+)?(${NAME_WORD}(?:\s+(?:&\s+|and\s+|of\s+|de\s+)?${NAME_WORD})*)`,
);
const WORKS_AT = new RegExp(
  String.raw`\b(?:you work (?:at|for)|you represent|on behalf of|welcome to)\s+(?:the\s+)?(${NAME_WORD}(?:\s+(?:&\s+|and\s+|of\s+)?${NAME_WORD})*)`,
  'i',
);
const TOWN = /^\s*(?:,\s*)?(?:in|based in|located in)\s+((?:[A-Z][\w'’-]*)(?:(?:\s+|,\s*)[A-Z][\w'’-]*){0,3})/;
const AGENT = /\b[Yy]ou are\s+([A-Z][\w'’-]*)(?=[\s,.;:!]|$)/;

/** The identity in the system prompt's first sentences ("You are Ava, the assistant of Bella's Bakery in Springfield."). */
export function identityFromPrompt(prompt: string | null): Partial<Identity> {
  if (!prompt?.trim()) return {};
  const head = prompt.slice(0, 600);
  const out: Partial<Identity> = {};
  const agent = AGENT.exec(head);
  if (agent && !/^(The|A|An|Our|My|Your)$/.test(agent[1]!)) out.agentName = agent[1];
  const business = BUSINESS.exec(head) ?? WORKS_AT.exec(head);
  if (business) {
    out.business = business[1]!.replace(/[.,;:]+$/, '');
    const town = TOWN.exec(head.slice(business.index + business[0].length));
    if (town) out.town = town[1]!.replace(/[.,;:]+$/, '');
  }
  return out;
}

export function identityOf(snapshot: Pick<KnowledgeSnapshot, 'site' | 'pages'>, systemPrompt: string | null, agentName: string | undefined): Identity {
  const prompt = identityFromPrompt(systemPrompt);
  const homepage = snapshot.pages.find((p) => snapshot.site.homepage && p.url === snapshot.site.homepage);
  const business = snapshot.site.name?.trim() || prompt.business || homepage?.title.trim() || undefined;
  return { agentName: agentName?.trim() || prompt.agentName || 'the assistant', ...(business && { business }), ...(prompt.town && { town: prompt.town }) };
}
