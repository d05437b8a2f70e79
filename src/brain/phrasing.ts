/**
 * Knowledge said aloud: a unit of the site's text turned into one or two sentences a person would
 * say ("Saturday: 7:00 am – 3:00 pm" → "On Saturday, we're open from 7 am to 3 pm."). Only the form
 * changes (times written as spoken, day abbreviations expanded, a table row made a sentence); every
 * fact comes from the text itself.
 */
import { CLOSED, PRICE, TIME } from '../knowledge/patterns.js';
import type { Unit } from './knowledge-index.js';
import { sentences } from '../knowledge/compile.js';

const DAYS: Record<string, string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  tues: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  thur: 'Thursday',
  thurs: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};
const TIME_TOKEN = String.raw`(?:\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|noon|midday|midnight)`;

/** Spoken form of times, ranges and abbreviations (English). */
export function speakable(text: string, language = 'en'): string {
  let out = text.replace(/\s+/g, ' ').replace(/\s·\s/g, ', ').replace(/\s&\s/g, ' and ').trim();
  if (language !== 'en') return out;
  out = out
    // 24-hour clock → 12-hour, as said in English ("15:00" → "3 pm"), unless already am/pm.
    .replace(/(?<![$€£¥\d.,:])\b([01]?\d|2[0-3]):([0-5]\d)\b(?!\s*(?:a\.?m|p\.?m))/gi, (_, h: string, m: string) => {
      const hour = Number(h);
      const suffix = hour < 12 ? 'am' : 'pm';
      const twelve = hour % 12 || 12;
      return m === '00' ? `${twelve} ${suffix}` : `${twelve}:${m} ${suffix}`;
    })
    .replace(/\b(\d{1,2}):00\s*(am|pm)\b/gi, '$1 $2')
    .replace(/\b(\d{1,2})(:\d{2})?\s*(a|p)\.m\.?/gi, (_, h: string, m: string | undefined, ap: string) => `${h}${m ?? ''} ${ap.toLowerCase()}m`)
    .replace(new RegExp(`(${TIME_TOKEN})\\s*[–—-]\\s*(${TIME_TOKEN})`, 'gi'), '$1 to $2')
    .replace(/\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\b\.?/g, (_, d: string) => DAYS[d.toLowerCase()]!)
    .replace(
      /\b(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\s*[–—-]\s*(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b/g,
      '$1 to $2',
    );
  return out;
}

function sentence(text: string): string {
  const trimmed = text.trim().replace(/[:;,]$/, '');
  if (!trimmed) return '';
  const capital = trimmed[0]!.toUpperCase() + trimmed.slice(1);
  return /[.!?)]$/.test(capital) ? capital : `${capital}.`;
}

function lowerFirst(text: string): string {
  return text.length > 1 && /^[A-Z][a-z]/.test(text) && !/^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|I)\b/.test(text)
    ? text[0]!.toLowerCase() + text.slice(1)
    : text;
}

/** "Saturday: 7 am to 3 pm" → "On Saturday, we're open from 7 am to 3 pm." */
function hoursLine(line: string): string | undefined {
  const match = /^(.+?)\s*:\s*(.+)$/.exec(line);
  if (!match) return undefined;
  const [, days, value] = match as unknown as [string, string, string];
  if (/^closed\.?$/i.test(value.trim())) return `We're closed on ${days}.`;
  if (TIME.test(value) && !/appointment|by arrangement/i.test(value)) return `On ${days}, we're open from ${value.replace(/\.$/, '')}.`;
  return `${days}: ${value.replace(/\.$/, '')}.`;
}

function isHoursUnit(unit: Unit): boolean {
  return (
    /\b(hours?|opening|open)\b/i.test(unit.context) || /\b(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|weekdays?|weekends?)\b/.test(unit.text)
  );
}

/** The unit as what the agent says. */
export function phrase(unit: Unit, language: string): string {
  switch (unit.kind) {
    case 'row': {
      const cells = (unit.cells ?? []).map((c) => speakable(c, language));
      const priceAt = cells.findIndex((c, i) => i > 0 && PRICE.test(c));
      if (priceAt > 0 && cells[0]) {
        const notes = cells.filter((c, i) => i !== 0 && i !== priceAt && c);
        return `The ${lowerFirst(cells[0])} is ${cells[priceAt]}${notes.length ? ` (${notes.join(', ')})` : ''}.`;
      }
      return sentence(speakable(unit.text, language));
    }
    case 'item': {
      const text = speakable(unit.text, language);
      if (language === 'en' && isHoursUnit(unit) && (TIME.test(text) || CLOSED.test(text))) return hoursLine(text) ?? sentence(text);
      return sentence(text);
    }
    case 'list': {
      const items = (unit.items ?? []).map((i) => speakable(i, language).replace(/\.$/, ''));
      if (language === 'en' && /\b(hours?|opening)\b/i.test(unit.heading)) {
        return `Our opening hours are: ${items.map((i) => i.replace(/\s*:\s*/, ', ')).join('; ')}.`;
      }
      return `${unit.heading ? `${unit.heading}: ` : ''}${items.join('; ')}.`;
    }
    case 'faq': {
      const parts = sentences(unit.text);
      let said = parts[0] ?? '';
      if (said.length < 60 && parts[1]) said += ` ${parts[1]}`;
      return sentence(speakable(said, language));
    }
    case 'sentence': {
      let said = speakable(unit.text, language);
      // "He speaks English and Spanish." says nothing without the sentence naming him.
      if (unit.previous && /^(he|she|they|it|this|that|these|those|his|her|their|its)\b/i.test(unit.text))
        said = `${speakable(unit.previous, language)} ${said}`;
      // A short sentence is said with its neighbour in the paragraph, the one after it or else the one before.
      if (said.length < 50 && unit.next) said += ` ${speakable(unit.next, language)}`;
      else if (said.length < 50 && unit.previous && !said.startsWith(speakable(unit.previous, language)))
        said = `${speakable(unit.previous, language)} ${said}`;
      return sentence(said);
    }
    default:
      return sentence(speakable(unit.text, language));
  }
}
