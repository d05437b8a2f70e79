/**
 * Configuration knobs that need more than "a number >= min": REALTIME_SHARDS takes a whole number
 * up to 64 or `auto` (one shard per core, none on a single core); anything else stops the server
 * at start with a message naming the knob, rather than forking a surprising number of processes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { loadConfig } from '../../src/core/config.js';

const shards = (value?: string) => loadConfig(value === undefined ? {} : { REALTIME_SHARDS: value }).realtimeShards;

describe('REALTIME_SHARDS', () => {
  it('is 0 (one process) unless set, a whole number when given one, and one per core with auto', () => {
    assert.equal(shards(), 0);
    assert.equal(shards('3'), 3);
    const cores = os.availableParallelism();
    assert.equal(shards('auto'), cores >= 2 ? cores : 0);
  });

  it('refuses what is not a whole number from 0 to 64, naming the knob', () => {
    for (const bad of ['-1', '1.5', '65', 'two', 'AUTO']) {
      assert.throws(() => shards(bad), /REALTIME_SHARDS must be/, bad);
    }
  });
});
