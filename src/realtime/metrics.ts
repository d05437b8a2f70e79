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

/** A histogram's counts, to be added into another (a shard's, at the main process's /metrics). */
export interface HistogramCounts {
  counts: number[];
  sum: number;
  count: number;
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

/** This process's real-time figures, as a shard reports them to the main process. */
export interface RealtimeSnapshot {
  /** Which shard process it comes from (the main process adds it). */
  shard?: number;
  liveSessions: number;
  framesRelayed: number;
  lateUtterances: number;
  playerLagSpells: number;
  playerFramesSkipped: number;
  relayDelay: HistogramCounts;
  tickLag: HistogramCounts;
  heapUsed: number;
  rss: number;
}

export function realtimeSnapshot(liveSessions: number): RealtimeSnapshot {
  const { relayDelay, tickLag } = realtimeMetrics;
  const memory = process.memoryUsage();
  return {
    liveSessions,
    framesRelayed: realtimeMetrics.framesRelayed,
    lateUtterances: realtimeMetrics.lateUtterances,
    playerLagSpells: realtimeMetrics.playerLagSpells,
    playerFramesSkipped: realtimeMetrics.playerFramesSkipped,
    relayDelay: { counts: [...relayDelay.counts], sum: relayDelay.sum, count: relayDelay.count },
    tickLag: { counts: [...tickLag.counts], sum: tickLag.sum, count: tickLag.count },
    heapUsed: memory.heapUsed,
    rss: memory.rss,
  };
}

function added(histogram: Histogram, others: HistogramCounts[]): Histogram {
  const sum = new Histogram();
  for (const h of [histogram, ...others]) {
    h.counts.forEach((c, i) => (sum.counts[i] += c));
    sum.sum += h.sum;
    sum.count += h.count;
  }
  return sum;
}

/**
 * The node's metrics; `more` are other capabilities' sections (app.ts passes them), already
 * formatted; `shards` the real-time figures of the node's shard processes, added to this one's.
 */
export function metricsText(liveSessions: number, more: string[] = [], shards: RealtimeSnapshot[] = []): string {
  const memory = process.memoryUsage();
  const total = (key: 'liveSessions' | 'framesRelayed' | 'lateUtterances' | 'playerLagSpells' | 'playerFramesSkipped', own: number) =>
    shards.reduce((sum, s) => sum + s[key], own);
  const shardMemory = shards.length
    ? [
        '# HELP presence_shard_resident_memory_bytes Resident set size of each real-time shard process.',
        '# TYPE presence_shard_resident_memory_bytes gauge',
        ...shards.map((s, i) => `presence_shard_resident_memory_bytes{shard="${s.shard ?? i}"} ${s.rss}`),
      ]
    : [];
  return [
    '# HELP presence_live_sessions Sessions with a live side on this node.',
    '# TYPE presence_live_sessions gauge',
    `presence_live_sessions ${total('liveSessions', liveSessions)}`,
    '# HELP presence_frames_relayed_total Audio frames sent toward players.',
    '# TYPE presence_frames_relayed_total counter',
    `presence_frames_relayed_total ${total('framesRelayed', realtimeMetrics.framesRelayed)}`,
    '# HELP presence_playback_late_total Utterances whose audio left more than 50 ms late (the node could not keep time).',
    '# TYPE presence_playback_late_total counter',
    `presence_playback_late_total ${total('lateUtterances', realtimeMetrics.lateUtterances)}`,
    '# HELP presence_player_frames_skipped_total Audio frames skipped for player pages that could not keep up.',
    '# TYPE presence_player_frames_skipped_total counter',
    `presence_player_frames_skipped_total ${total('playerFramesSkipped', realtimeMetrics.playerFramesSkipped)}`,
    '# HELP presence_player_lag_spells_total Times a player page fell behind and had its frames skipped.',
    '# TYPE presence_player_lag_spells_total counter',
    `presence_player_lag_spells_total ${total('playerLagSpells', realtimeMetrics.playerLagSpells)}`,
    added(
      realtimeMetrics.relayDelay,
      shards.map((s) => s.relayDelay),
    ).prometheus('presence_relay_delay_seconds', 'Time from a frame being both arrived and due to its release toward the player.'),
    added(
      realtimeMetrics.tickLag,
      shards.map((s) => s.tickLag),
    ).prometheus('presence_clock_tick_lag_seconds', 'Lateness of the playback clock timer.'),
    '# HELP presence_heap_used_bytes JavaScript heap in use.',
    '# TYPE presence_heap_used_bytes gauge',
    `presence_heap_used_bytes ${memory.heapUsed}`,
    '# HELP presence_resident_memory_bytes Resident set size of this process.',
    '# TYPE presence_resident_memory_bytes gauge',
    `presence_resident_memory_bytes ${memory.rss}`,
    ...shardMemory,
    ...more,
    '',
  ].join('\n');
}
