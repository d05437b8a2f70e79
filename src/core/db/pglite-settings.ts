/**
 * The embedded database's memory settings, used by the server (database.ts) and passed to the worker
 * thread that creates a new data folder (initdb-worker.mjs), so both start PGlite the same way.
 *
 * PGlite's defaults are a desktop server's: 128 MB of shared buffers inside its WebAssembly memory
 * (touched at start, so resident), 64 MB for VACUUM and index builds. The data files sit on the
 * local disk, whose page cache already keeps hot pages, so 16 MB of buffers is plenty for this
 * service's tables and keeps an idle server small (docs/decisions.md "Memory on a small VM").
 * Single-user mode: one backend, so max_connections only sizes shared tables.
 */
export const PGLITE_START_PARAMS: readonly string[] = [
  // PGlite's own defaults (PGlite.defaultStartParams in @electric-sql/pglite 0.4), kept as they are.
  '--single',
  '-F',
  '-O',
  '-j',
  '-c',
  'search_path=public',
  '-c',
  'exit_on_error=false',
  '-c',
  'log_checkpoints=false',
  '-c',
  'max_worker_processes=0',
  '-c',
  'max_parallel_workers=0',
  '-c',
  'max_parallel_workers_per_gather=0',
  // Ours.
  '-c',
  'shared_buffers=16MB',
  '-c',
  'maintenance_work_mem=16MB',
  '-c',
  'max_connections=10',
];
