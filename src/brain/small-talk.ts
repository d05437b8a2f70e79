/**
 * The turns that are not questions about the business: greetings, thanks, goodbyes, "how are
 * you", "who are you", "what can you do". They are answered as a person would, by the offline
 * engine, without looking anything up (and never recorded as knowledge gaps).
 */
import { normalise } from './text.js';

export type SmallTalk = 'greeting' | 'how_are_you' | 'thanks' | 'goodbye' | 'identity' | 'robot' | 'capabilities' | 'about' | 'ack';

const GREETING = /^(hi|hello|hey|hiya|howdy|greetings|good (morning|afternoon|evening|day)|hi there|hello there|hey there)\b[\s,!.]*/;
const HOW_ARE_YOU = /^(how are you( doing| today)?|how is it going|how's it going|how are things|you ok|are you ok)[\s?!.]*$/;
const THANKS =
  /^((great|perfect|ok|okay|lovely|brilliant),? )?(thank you (so|very) much|thanks (so|very) much|thanks a lot|thanks a bunch|many thanks|much appreciated|thank you|thank u|thanks|thx|cheers)\b/;
const GOODBYE =
  /\b(bye|goodbye|good bye|see you|see ya|take care|have a (nice|good|great) (day|one|evening)|that is all|that's all|nothing else|no more questions)\b/;
const IDENTITY =
  /\b(who are you|who is this|what is your name|what's your name|what your name|who am i (talking|speaking|chatting) (to|with)|introduce yourself)\b/;
const ROBOT = /\bare you (a |an )?(robot|bot|human|real|real person|person|ai|computer|machine|chatbot)\b/;
const CAPABILITIES = /\b(what can you (do|help( me)? with|tell me)|how can you help|what do you know|what can i ask)\b/;
const ABOUT =
  /\b(tell me (about|more about) (you|yourselves|yourself|the (business|company|shop|place)|your (business|company|shop))|what (do you|does (your|the) (business|company|shop)) do|what is this (place|business|shop|company)(?! (called|named))|what are you about)\b|^what (do|can) (you|you guys|your (business|company|shop)) (sell|offer|provide|make|stock)\W*$|^what (kind of |sort of )?(products|services|things) do you (have|offer|sell|provide)\W*$/;
const ACK = /^(ok|okay|great|cool|nice|perfect|awesome|alright|all right|got it|i see|sure|fine|good|yes|no|yep|nope|right|understood)[\s.!]*$/;

export interface TurnShape {
  /** The visitor greeted first ("Hi, what time do you open?"). */
  greeted: boolean;
  /** What is left once a greeting or thanks is taken off. */
  rest: string;
  smallTalk?: SmallTalk;
}

export function shapeOf(text: string): TurnShape {
  let normal = normalise(text).replace(/\s+/g, ' ').trim();
  const greeting = GREETING.exec(normal);
  const greeted = !!greeting;
  if (greeting) normal = normal.slice(greeting[0].length).trim();
  let rest = greeted ? text.trim().replace(/^\s*\S+(\s+(there|morning|afternoon|evening|day))?[\s,!.]*/i, '') : text.trim();
  if (!normal) return { greeted, rest: '', smallTalk: 'greeting' };
  if (HOW_ARE_YOU.test(normal)) return { greeted, rest: '', smallTalk: 'how_are_you' };
  const thanks = THANKS.exec(normal);
  if (thanks) {
    const after = normal.slice(thanks[0].length).replace(/^[\s,!.]+/, '');
    if (!after || GOODBYE.test(after) || ACK.test(after)) return { greeted, rest: '', smallTalk: GOODBYE.test(after) ? 'goodbye' : 'thanks' };
    normal = after;
    rest = rest.replace(/^.*?\b(thanks|thank you|thank u|thx|cheers)\b[\s,!.]*(so much|a lot|very much)?[\s,!.]*/i, '');
  }
  if (GOODBYE.test(normal) && normal.split(' ').length <= 8) return { greeted, rest: '', smallTalk: 'goodbye' };
  if (ROBOT.test(normal)) return { greeted, rest: '', smallTalk: 'robot' };
  if (IDENTITY.test(normal)) return { greeted, rest: '', smallTalk: 'identity' };
  if (CAPABILITIES.test(normal)) return { greeted, rest: '', smallTalk: 'capabilities' };
  if (ABOUT.test(normal)) return { greeted, rest: '', smallTalk: 'about' };
  if (ACK.test(normal)) return { greeted, rest: '', smallTalk: 'ack' };
  return { greeted, rest };
}

export interface Persona {
  name: string;
  business: string | undefined;
  description: string | undefined;
  /** What the agent can talk about ("our opening hours, prices and how to reach us"). */
  topics: string | undefined;
}

export function smallTalkReply(kind: SmallTalk, persona: Persona): string {
  const business = persona.business ?? 'us';
  const from = persona.business ? ` from ${persona.business}` : '';
  const help = persona.topics ? ` I can tell you about ${persona.topics}.` : '';
  switch (kind) {
    case 'greeting':
      return `Hello! I'm ${persona.name}${from}. How can I help you today?`;
    case 'how_are_you':
      return "I'm doing well, thank you for asking! How can I help you today?";
    case 'thanks':
      return "You're welcome! Is there anything else I can help you with?";
    case 'goodbye':
      return `Thank you for stopping by, and have a lovely day! Goodbye.`;
    case 'identity':
      return `I'm ${persona.name}, the virtual assistant of ${persona.business ?? 'this website'}.${help || ' What would you like to know?'}`;
    case 'robot':
      return `I'm a virtual assistant, not a person: I'm ${persona.name}, and I answer questions about ${business}.${help}`;
    case 'capabilities':
      return `I can answer your questions about ${business}.${help} What would you like to know?`;
    case 'about':
      return persona.description
        ? `${persona.description.replace(/\.?$/, '.')} What would you like to know?`
        : `I'm ${persona.name}, and I answer questions about ${business}.${help}`;
    case 'ack':
      return 'Great! What else would you like to know?';
  }
}

/** "The visitor's e-mail address" → "e-mail address"; a long or missing description → the name. */
export function detailLabel(detail: { name: string; description: string }): string {
  const description = detail.description
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.?!]+$/, '');
  const cleaned = description.replace(/^(the |a |an )?(visitor'?s?|customer'?s?|caller'?s?|user'?s?|your|their)\s+/i, '').replace(/^(the|a|an)\s+/i, '');
  if (cleaned && cleaned.length <= 60) return cleaned[0]!.toLowerCase() + cleaned.slice(1);
  return detail.name.replace(/_/g, ' ');
}

const ASKED = /\bmay i have your\b/i;

/** Whether the agent asked for a detail in its last turn (then it does not ask again at once). */
export function askedLastTurn(history: Array<{ role: string; text: string }>): boolean {
  const last = [...history].reverse().find((t) => t.role === 'agent');
  return !!last && ASKED.test(last.text);
}

export function askForDetail(detail: { name: string; description: string }, after: 'answer' | 'unknown' | 'goodbye'): string {
  const label = detailLabel(detail);
  if (after === 'unknown') return `May I have your ${label}, so the team can get back to you?`;
  if (after === 'goodbye') return `Before you go, may I have your ${label}?`;
  return `By the way, may I have your ${label}?`;
}
