/**
 * The CMU pronouncing dictionary (134,000 words → ARPAbet phones), shared by the offline engine's
 * word timings and the text lip-sync. The package is an ES module of 4.7 MB, so it has exactly one
 * loader here, by import(): loading the same ES module with require() while an import() of it is
 * still evaluating throws (Node's require(esm)), which once broke speech for good after an early
 * request. A failed load is tried again by the next caller, never kept.
 */
import { once } from '../core/once.js';

export type Pronunciations = Readonly<Record<string, string>>;

const dictionary = once<Pronunciations>(async () => (await import('cmu-pronouncing-dictionary')).dictionary);

/** The dictionary, loading it if needed (about 0.4 s the first time). */
export function loadPronunciations(): Promise<Pronunciations> {
  return dictionary.get();
}

/** The dictionary if it has loaded, else undefined (callers then use spelling rules). */
export function pronunciationsIfLoaded(): Pronunciations | undefined {
  return dictionary.peek();
}
