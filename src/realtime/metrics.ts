/**
 * Counters of the real-time path, kept cheap enough for the hot path (a few integer adds per
 * frame): how late audio leaves after it arrived, how late the shared clock ticks, and volumes.
 * Served in Prometheus text format at /metrics.
 */
const BOUNDS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500];

export class Histogram {
  readonly counts = new Array<number>(BOUNDS_MS.length + 1).fill(0);
  sum = 0;
  count = 0;

  observe(ms: number): void {
    let i = 0;
    while (i < BOUNDS_MS.length && ms > BOUNDS_MS[i]) i++;
    this.counts[i]++;
    this.sum += ms;
    this.count++;
  }

  /** The smallest bucket bound under which `q` of the observations fall. */
  quantile(q: number): number {
    const target = q * this.count;
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i];
      if (seen >= target) return BOUNDS_MS[i] ?? Infinity;
    }
    return Infinity;
  }

  prometheus(name: string, help: string): string {
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
    let cumulative = 0;
    BOUNDS_MS.forEach((bound, i) => {
      cumulative += this.counts[i];
      lines.push(`${name}_bucket{le="${bound / 1000}"} ${cumulative}`);
    });
    lines.push(`${name}_bucket{le="+Inf"} ${this.count}`, `${name}_sum ${this.sum / 1000}`, `${name}_count ${this.count}`);
    return lines.join('\n');
  }
}

export const realtimeMetrics = {
  /** A frame's release time minus the later of its audio's arrival and its due time. */
  relayDelay: new Histogram(),
  /** How late the shared 5 ms timer fired. */
  tickLag: new Histogram(),
  framesRelayed: 0,
  /** Utterances whose audio left late enough to warn the caller (playback_late). */
  lateUtterances: 0,
  /** Times a player page fell behind (its send buffer passed the high-water mark). */
  playerLagSpells: 0,
  /** Audio frames skipped for pages that fell behind. */
  playerFramesSkipped: 0,
};

/** The node's metrics; `more` are other capabilities' sections (app.ts passes them), already formatted. */
export function metricsText(liveSessions: number, more: string[] = []): string {
  const memory = process.memoryUsage();
  return [
    '# HELP presence_live_sessions Sessions with a live side on this node.',
    '# TYPE presence_live_sessions gauge',
    `presence_live_sessions ${liveSessions}`,
    '# HELP presence_frames_relayed_total Audio frames sent toward players.',
    '# TYPE presence_frames_relayed_total counter',
    `presence_frames_relayed_total ${realtimeMetrics.framesRelayed}`,
    '# HELP presence_playback_late_total Utterances whose audio left more than 50 ms late (the node could not keep time).',
    '# TYPE presence_playback_late_total counter',
    `presence_playback_late_total ${realtimeMetrics.lateUtterances}`,
    '# HELP presence_player_frames_skipped_total Audio frames skipped for player pages that could not keep up.',
    '# TYPE presence_player_frames_skipped_total counter',
    `presence_player_frames_skipped_total ${realtimeMetrics.playerFramesSkipped}`,
    '# HELP presence_player_lag_spells_total Times a player page fell behind and had its frames skipped.',
    '# TYPE presence_player_lag_spells_total counter',
    `presence_player_lag_spells_total ${realtimeMetrics.playerLagSpells}`,
    realtimeMetrics.relayDelay.prometheus('presence_relay_delay_seconds', 'Time from a frame being both arrived and due to its release toward the player.'),
    realtimeMetrics.tickLag.prometheus('presence_clock_tick_lag_seconds', 'Lateness of the playback clock timer.'),
    '# HELP presence_heap_used_bytes JavaScript heap in use.',
    '# TYPE presence_heap_used_bytes gauge',
    `presence_heap_used_bytes ${memory.heapUsed}`,
    '# HELP presence_resident_memory_bytes Resident set size of this process.',
    '# TYPE presence_resident_memory_bytes gauge',
    `presence_resident_memory_bytes ${memory.rss}`,
    ...more,
    '',
  ].join('\n');
}
