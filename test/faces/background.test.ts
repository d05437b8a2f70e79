/**
 * Built-in faces generated in a worker thread (what the server does at first start, since
 * `npm install` builds only the default face): the main thread's timers keep running while a face
 * is built, the face and its stamp are written, a second request in the process shares the work,
 * a face a page asks for goes before those waiting, and a stamp left empty by a killed process
 * only means a rebuild, never a failure.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ensureFacesInBackground } from '../../src/faces/background.js';
import { BUILTIN_FACES } from '../../src/faces/builtin.js';
import { facesAreCurrent } from '../../src/faces/freshness.js';

test('a face is built off the main thread, stamped atomically, and a broken stamp means a rebuild', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-faces-bg-'));
  try {
    // The main thread ticks every 20 ms while the worker paints and packs the face (seconds of CPU).
    let ticks = 0;
    const started = Date.now();
    const ticker = setInterval(() => ticks++, 20);
    const run = ensureFacesInBackground(dir, ['face01']);
    const again = ensureFacesInBackground(dir, ['face01']);
    await Promise.all([run, again]);
    clearInterval(ticker);
    const expected = (Date.now() - started) / 20;
    assert.ok(ticks > expected * 0.5, `the main thread kept running: ${ticks} of ~${Math.round(expected)} ticks`);
    const glb = fs.readFileSync(path.join(dir, 'face01.glb'));
    assert.equal(glb.toString('latin1', 0, 4), 'glTF');
    const stamp = JSON.parse(fs.readFileSync(path.join(dir, '.faces-stamp.json'), 'utf8'));
    assert.deepEqual(Object.keys(stamp), ['face01', 'face01.still'], 'the face and its still picture are stamped');
    assert.equal(fs.readFileSync(path.join(dir, 'face01.still.png')).toString('latin1', 1, 4), 'PNG');
    assert.ok(JSON.parse(fs.readFileSync(path.join(dir, 'face01.still.json'), 'utf8')).placement.b > 0);
    assert.deepEqual(
      fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file left',
    );

    // What the server checks on its own thread before it starts a worker for the generator.
    const face01 = BUILTIN_FACES.filter((f) => f.avatar_id === 'face01');
    assert.equal(await facesAreCurrent(dir, face01), true, 'built and stamped: current');
    assert.equal(await facesAreCurrent(dir, BUILTIN_FACES.slice(0, 2)), false, 'a face never built is not current');
    fs.renameSync(path.join(dir, 'face01.still.png'), path.join(dir, 'moved.png'));
    assert.equal(await facesAreCurrent(dir, face01), false, 'a missing still is not current');
    fs.renameSync(path.join(dir, 'moved.png'), path.join(dir, 'face01.still.png'));
    fs.writeFileSync(path.join(dir, '.faces-stamp.json'), JSON.stringify({ ...stamp, face01: 'another-generator' }));
    assert.equal(await facesAreCurrent(dir, face01), false, 'a face stamped by another generator is outdated');
    fs.writeFileSync(path.join(dir, '.faces-stamp.json'), JSON.stringify(stamp));
    assert.equal(await facesAreCurrent(dir, face01), true);

    // A process killed while writing the stamp (before, it was truncated then written) left it
    // empty: the next run rebuilds and stamps again.
    fs.writeFileSync(path.join(dir, '.faces-stamp.json'), '');
    const { ensureFaces } = await import('../../src/faces/index.js');
    const before = fs.statSync(path.join(dir, 'face01.glb')).mtimeMs;
    await ensureFaces(dir, ['face01']);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, '.faces-stamp.json'), 'utf8')), stamp);
    assert.ok(fs.statSync(path.join(dir, 'face01.glb')).mtimeMs >= before);
    // Up to date now: nothing is rebuilt.
    const mtime = fs.statSync(path.join(dir, 'face01.glb')).mtimeMs;
    await ensureFaces(dir, ['face01']);
    assert.equal(fs.statSync(path.join(dir, 'face01.glb')).mtimeMs, mtime);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a face a page asks for is built before the faces waiting in the background', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-faces-order-'));
  try {
    // The server's start queues faces (not first); then a page asks for face04.
    const background = ensureFacesInBackground(dir, ['face02', 'face03'], { first: false });
    const asked = ensureFacesInBackground(dir, ['face04']);
    await asked;
    assert.ok(fs.existsSync(path.join(dir, 'face04.glb')), 'the face asked for is there when its wait ends');
    assert.ok(!fs.existsSync(path.join(dir, 'face03.glb')), 'face03, still waiting, came after it');
    await background;
    const built = (id: string) => fs.statSync(path.join(dir, `${id}.glb`)).mtimeMs;
    assert.ok(built('face04') <= built('face03'), 'face04 went before face03, which was waiting');
    assert.equal(
      await facesAreCurrent(
        dir,
        BUILTIN_FACES.filter((f) => ['face02', 'face03', 'face04'].includes(f.avatar_id)),
      ),
      true,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
