/**
 * What preemptive generation did (answers prepared before the visitor's turn ended): counters that
 * the conversation loop owns, one set per loop, that every live conversation of it adds to; read by
 * /metrics and the conversation bench.
 */

/** Why an answer prepared ahead was thrown away. */
export type DiscardReason = 'resumed' | 'mismatch' | 'other';

export class PreemptiveStats {
  /** Answers prepared ahead. */
  started = 0;
  /** Committed: the turn ended with the same words, and the prepared answer was given. */
  kept = 0;
  /** Thrown away, by reason. */
  readonly discarded: Record<DiscardReason, number> = { resumed: 0, mismatch: 0, other: 0 };
  /**
   * Wall-clock milliseconds of work thrown away: the answering engine until it finished or was
   * stopped, plus the speech layer until the held first audio was ready or was stopped.
   */
  discardedWorkMs = 0;

  /** A copy of the figures now (a bench compares two). */
  snapshot(): { started: number; kept: number; discarded: Record<DiscardReason, number>; discardedWorkMs: number } {
    return { started: this.started, kept: this.kept, discarded: { ...this.discarded }, discardedWorkMs: this.discardedWorkMs };
  }

  /** The figures in Prometheus text format, for /metrics. */
  metricsText(): string {
    return [
      "# HELP presence_answers_prepared_total Answers begun before the visitor's turn ended (preemptive generation).",
      '# TYPE presence_answers_prepared_total counter',
      `presence_answers_prepared_total ${this.started}`,
      '# HELP presence_answers_prepared_kept_total Answers prepared ahead and given (the turn ended with the same words).',
      '# TYPE presence_answers_prepared_kept_total counter',
      `presence_answers_prepared_kept_total ${this.kept}`,
      '# HELP presence_answers_prepared_discarded_total Answers prepared ahead and thrown away, by reason.',
      '# TYPE presence_answers_prepared_discarded_total counter',
      ...Object.entries(this.discarded).map(([reason, n]) => `presence_answers_prepared_discarded_total{reason="${reason}"} ${n}`),
      '# HELP presence_answers_prepared_discarded_work_seconds_total Wall-clock work thrown away with discarded answers.',
      '# TYPE presence_answers_prepared_discarded_work_seconds_total counter',
      `presence_answers_prepared_discarded_work_seconds_total ${this.discardedWorkMs / 1000}`,
    ].join('\n');
  }
}
