/**
 * The page extractor (linkedom, Readability, turndown: some 40 MB with their parsers) is loaded by
 * the first page read, not when the server starts: an idle server never reads a page.
 */
import { once } from '../core/once.js';

export const loadExtractor = once(() => import('./extract.js'));
