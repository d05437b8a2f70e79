/**
 * The knowledge's Markdown (read pages, owner overrides, sections) as blocks: headings, paragraphs,
 * lists and tables, each with the headings it sits under. Boilerplate removal compares blocks
 * across pages, and the answering engine searches and quotes them.
 */

export interface Block {
  kind: 'heading' | 'paragraph' | 'list' | 'table';
  /** The block as plain text (list items and table rows joined by newlines). */
  text: string;
  /** The headings above it, outermost first. */
  headings: string[];
  level?: number;
  items?: string[];
  headers?: string[];
  rows?: string[][];
  /** The block's Markdown, to write the page back without it. */
  markdown: string;
}

/** Markdown emphasis, code and escapes removed: what a reader would say. */
export function plain(markdown: string): string {
  return markdown
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|\W)[*_](\S.*?\S|\S)[*_](?=\W|$)/g, '$1$2')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A cell that holds data: a number, a day, "closed", "free". */
const DATA_CELL = /\d|\b(mon|tues?|wed|thu(rs)?|fri|sat|sun)(day)?s?\b|\b(closed|free|yes|no)\b/i;

function cells(line: string): string[] {
  const inner = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => plain(c.replace(/\\\|/g, '|')));
}

export function parseBlocks(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  const path: Array<{ level: number; text: string }> = [];
  const headings = () => path.map((h) => h.text);
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim()) {
      i++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const text = plain(heading[2]!);
      while (path.length && path[path.length - 1]!.level >= level) path.pop();
      blocks.push({ kind: 'heading', text, level, headings: headings(), markdown: line });
      path.push({ level, text });
      i++;
      continue;
    }
    if (/^\s*\|/.test(line)) {
      const start = i;
      const rows: string[][] = [];
      while (i < lines.length && /^\s*\|/.test(lines[i]!)) {
        if (!/^\s*\|?\s*:?-{2,}/.test(lines[i]!)) rows.push(cells(lines[i]!));
        i++;
      }
      let headers = rows.shift() ?? [];
      // A table written without a header row gets an empty one (turndown): its first row is the
      // header when it reads like one, not like data ("Monday | Closed", "Latte | $4.25").
      if (headers.every((h) => !h) && rows.length > 1 && !rows[0]!.some((cell) => DATA_CELL.test(cell))) headers = rows.shift()!;
      const body = rows.filter((r) => r.some((c) => c));
      blocks.push({
        kind: 'table',
        text: [headers.join(' | '), ...body.map((r) => r.join(' | '))].join('\n'),
        headings: headings(),
        headers,
        rows: body,
        markdown: lines.slice(start, i).join('\n'),
      });
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const start = i;
      const items: string[] = [];
      while (i < lines.length && (/^\s*([-*+]|\d+[.)])\s+/.test(lines[i]!) || (/^\s{2,}\S/.test(lines[i]!) && items.length))) {
        const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]!);
        if (item) items.push(plain(item[2]!));
        else items[items.length - 1] += ' ' + plain(lines[i]!);
        i++;
      }
      const kept = items.filter(Boolean);
      if (kept.length) blocks.push({ kind: 'list', text: kept.join('\n'), items: kept, headings: headings(), markdown: lines.slice(start, i).join('\n') });
      continue;
    }
    const start = i;
    const parts: string[] = [];
    while (i < lines.length && lines[i]!.trim() && !/^(#{1,6}\s|\s*\||\s*([-*+]|\d+[.)])\s+)/.test(lines[i]!)) parts.push(lines[i++]!);
    const text = plain(parts.join(' ').replace(/^>\s?/, ''));
    if (text) blocks.push({ kind: 'paragraph', text, headings: headings(), markdown: lines.slice(start, i).join('\n') });
  }
  return blocks;
}

/** A block's identity for comparing pages: its words, case and spacing aside. */
export function fingerprint(block: Block): string {
  return `${block.kind}:${block.text.toLowerCase().replace(/\s+/g, ' ').trim()}`;
}

/** Markdown from blocks (headings left without any content under them are dropped). */
export function writeBlocks(blocks: Block[]): string {
  const kept = blocks.filter((block, index) => {
    if (block.kind !== 'heading') return true;
    for (let j = index + 1; j < blocks.length; j++) {
      const next = blocks[j]!;
      if (next.kind !== 'heading') return true;
      if ((next.level ?? 9) <= (block.level ?? 9)) return false;
    }
    return false;
  });
  return kept.map((b) => b.markdown).join('\n\n');
}
