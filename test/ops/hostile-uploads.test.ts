/**
 * Issue 15, item 8 (uploads): `POST /v1/avatars` with a GLB whose JSON chunk is wrong-typed or
 * points outside its arrays, and with NUL or unpaired surrogates in its name or description, is
 * answered 4xx in the interface's shape (never 500); a body over the limit is answered 413 in the
 * `{"detail": …}` shape, and the client reads that answer instead of a connection reset, whether it
 * sends the whole body, waits for `100 Continue`, or streams it chunked.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded } from '../agents/helpers.js';
import { faceGlb } from '../catalog/support/face-glb.js';

/** A GLB container around a JSON chunk given as text (and an optional BIN chunk). */
function glbOf(jsonText: string, bin?: Uint8Array): Uint8Array {
  const json = Buffer.from(jsonText, 'utf8');
  const jsonPadded = Buffer.concat([json, Buffer.alloc((4 - (json.length % 4)) % 4, 0x20)]);
  const binPadded = bin ? Buffer.concat([Buffer.from(bin), Buffer.alloc((4 - (bin.length % 4)) % 4)]) : undefined;
  const total = 12 + 8 + jsonPadded.length + (binPadded ? 8 + binPadded.length : 0);
  const header = Buffer.alloc(20);
  header.writeUInt32LE(0x46546c67, 0);
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(total, 8);
  header.writeUInt32LE(jsonPadded.length, 12);
  header.writeUInt32LE(0x4e4f534a, 16);
  const parts = [header, jsonPadded];
  if (binPadded) {
    const binHeader = Buffer.alloc(8);
    binHeader.writeUInt32LE(binPadded.length, 0);
    binHeader.writeUInt32LE(0x004e4942, 4);
    parts.push(binHeader, binPadded);
  }
  return new Uint8Array(Buffer.concat(parts));
}

/** A valid face GLB split into its JSON and BIN chunks, to break one field at a time. */
function splitGlb(glb: Uint8Array): { json: any; bin: Uint8Array } {
  const buffer = Buffer.from(glb);
  const jsonLength = buffer.readUInt32LE(12);
  const json = JSON.parse(buffer.subarray(20, 20 + jsonLength).toString('utf8'));
  const binLength = buffer.readUInt32LE(20 + jsonLength);
  return { json, bin: buffer.subarray(28 + jsonLength, 28 + jsonLength + binLength) };
}

async function upload(t: TestApp, body: Uint8Array, query: string) {
  const response = await fetch(`${t.url}/v1/avatars?${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'model/gltf-binary' },
    body: body as BodyInit,
  });
  return { status: response.status, body: await response.json() };
}

/** One request over a fresh connection with node:http; resolves with the answer or rejects on a reset. */
function rawPost(
  t: TestApp,
  path: string,
  body: Buffer,
  options: { expectContinue?: boolean; chunked?: boolean; type?: string } = {},
): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${t.key}`, 'content-type': options.type ?? 'application/json' };
    if (!options.chunked) headers['content-length'] = String(body.length);
    if (options.expectContinue) headers.expect = '100-continue';
    const request = http.request(`${t.url}${path}`, { method: 'POST', headers, agent: false });
    request.on('response', (response) => {
      let text = '';
      response
        .setEncoding('utf8')
        .on('data', (d) => (text += d))
        .on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text), headers: response.headers }));
      response.on('error', reject);
    });
    request.on('error', reject);
    const send = () => {
      // In 64 KiB pieces, as a client streaming a file does.
      for (let i = 0; i < body.length; i += 65536) request.write(body.subarray(i, i + 65536));
      request.end();
    };
    if (options.expectContinue) request.on('continue', send);
    else send();
  });
}

/**
 * A client that keeps writing its body in 64 KiB pieces until it has sent it all or the server
 * closes, then reads what came back: the way a slow uploader meets a refusal. Before the fix the
 * server closed mid-body and this client got EPIPE and no answer at all.
 */
function slowUpload(t: TestApp, head: string, total: number): Promise<{ answer: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(new URL(t.url).port) });
    let answer = '';
    let error: string | undefined;
    socket.setEncoding('utf8').on('data', (d) => (answer += d));
    socket.on('error', (e) => (error = String(e)));
    socket.on('close', () => resolve({ answer, error }));
    socket.write(head);
    const piece = Buffer.alloc(65536, 0x61);
    let sent = 0;
    const next = () => {
      if (socket.destroyed) return;
      if (sent >= total) return void socket.end();
      socket.write(piece);
      sent += piece.length;
      setTimeout(next, 2);
    };
    next();
  });
}

forEachEngine('hostile uploads', (engine) => {
  let t: TestApp;
  let face: { json: any; bin: Uint8Array };
  before(async () => {
    t = await startTestApp(engine, { FACE_MAX_BYTES: String(1024 * 1024) });
    face = splitGlb(await faceGlb());
  });
  after(() => t?.close());

  describe('a GLB whose JSON chunk is wrong', () => {
    const wrongChunks: Array<[string, string]> = [
      ['null', 'null'],
      ['a number', '5'],
      ['a string', '"glTF"'],
      ['an array', '[]'],
      ['asset.version a number', '{"asset":{"version":2}}'],
      ['asset null', '{"asset":null}'],
      ['extensionsRequired a number', '{"asset":{"version":"2.0"},"extensionsRequired":5}'],
      ['extensionsRequired holding a number', '{"asset":{"version":"2.0"},"extensionsRequired":[5]}'],
      ['extensionsUsed a string', '{"asset":{"version":"2.0"},"extensionsUsed":"KHR_mesh_quantization"}'],
      ['meshes a number', '{"asset":{"version":"2.0"},"meshes":5}'],
      ['meshes [null]', '{"asset":{"version":"2.0"},"meshes":[null]}'],
      ['primitives a number', '{"asset":{"version":"2.0"},"meshes":[{"primitives":5}]}'],
      ['primitives [null]', '{"asset":{"version":"2.0"},"meshes":[{"primitives":[null]}]}'],
      ['primitives empty', '{"asset":{"version":"2.0"},"meshes":[{"primitives":[]}]}'],
      ['targets a number', '{"asset":{"version":"2.0"},"meshes":[{"primitives":[{"attributes":{},"targets":5}]}]}'],
      ['extras null', '{"asset":{"version":"2.0"},"meshes":[{"primitives":[{"attributes":{}}],"extras":null}]}'],
      ['targetNames a number', '{"asset":{"version":"2.0"},"meshes":[{"primitives":[{"attributes":{}}],"extras":{"targetNames":5}}]}'],
      ['targetNames holding null', '{"asset":{"version":"2.0"},"meshes":[{"primitives":[{"attributes":{},"targets":[{}]}],"extras":{"targetNames":[null]}}]}'],
      ['accessors a string', '{"asset":{"version":"2.0"},"accessors":"x"}'],
      ['bufferViews an object', '{"asset":{"version":"2.0"},"bufferViews":{}}'],
      ['nodes a number', '{"asset":{"version":"2.0"},"nodes":5}'],
      ['nodes [1]', '{"asset":{"version":"2.0"},"nodes":[1]}'],
      ['scene out of range', '{"asset":{"version":"2.0"},"scene":3}'],
      ['animations without channels', '{"asset":{"version":"2.0"},"animations":[{}]}'],
    ];
    for (const [what, chunk] of wrongChunks) {
      it(`${what}: 422 invalid_face`, async () => {
        const res = await upload(t, glbOf(chunk), 'name=Broken&gender=f');
        assertCoded(res, 422, 'invalid_face');
      });
    }

    // A real face with one field broken: the references a loader follows must stay inside their arrays.
    const breakages: Array<[string, (json: any) => void, RegExp]> = [
      ['an index accessor beyond the accessors', (j) => (j.meshes[0].primitives[0].indices = 99), /indices is 99/],
      ['a POSITION accessor given as a string', (j) => (j.meshes[0].primitives[0].attributes.POSITION = '0'), /POSITION must be an index/],
      ['a morph target accessor beyond the accessors', (j) => (j.meshes[0].primitives[0].targets[3].POSITION = 1e6), /targets\[3\]\.POSITION is 1000000/],
      ['a bufferView beyond the bufferViews', (j) => (j.accessors[0].bufferView = 50), /accessors\[0\]\.bufferView is 50/],
      ['a negative buffer index', (j) => (j.bufferViews[0].buffer = -1), /bufferViews\[0\]\.buffer must be an index/],
      ['a bufferView longer than its buffer', (j) => (j.bufferViews[0].byteLength = 1e9), /reaches past the end/],
      ['an accessor count beyond its bufferView', (j) => (j.accessors[0].count = 1e9), /reads past the end/],
      ['an unknown componentType', (j) => (j.accessors[0].componentType = 7), /componentType/],
      ['a node mesh beyond the meshes', (j) => (j.nodes[0].mesh = 7), /nodes\[0\]\.mesh is 7/],
      ['scene nodes beyond the nodes', (j) => (j.scenes[0].nodes = [9]), /scenes\[0\]\.nodes\[0\] is 9/],
      ['node children not an array', (j) => (j.nodes[0].children = 1), /children must be an array/],
      ['a morph name with a NUL', (j) => (j.meshes[0].extras.targetNames[0] = 'viseme\u0000sil'), /not plain text/],
      ['a morph name with an unpaired surrogate', (j) => (j.meshes[0].extras.targetNames[0] = 'viseme_sil\ud800'), /not plain text/],
    ];
    for (const [what, breakIt, message] of breakages) {
      it(`a face with ${what}: 422 invalid_face naming the field`, async () => {
        const json = structuredClone(face.json);
        breakIt(json);
        const res = await upload(t, glbOf(JSON.stringify(json), face.bin), 'name=Broken&gender=f');
        assertCoded(res, 422, 'invalid_face');
        assert.match(res.body.detail.message, message);
      });
    }

    it('the unbroken face is still accepted (the checks do not refuse real files)', async () => {
      const res = await upload(t, glbOf(JSON.stringify(face.json), face.bin), 'name=Fine&gender=f');
      assert.equal(res.status, 201, JSON.stringify(res.body));
    });
  });

  describe('hostile text in the name and description', () => {
    for (const [what, query, field] of [
      ['name', 'name=A%00B&gender=f', 'name'],
      ['description', 'name=A&gender=f&description=x%00y', 'description'],
    ]) {
      it(`a NUL in the ${what}: 422 at the field, never 500`, async () => {
        const res = await upload(t, glbOf(JSON.stringify(face.json), face.bin), query);
        assert.equal(res.status, 422, JSON.stringify(res.body));
        assert.deepEqual(res.body.detail[0].loc, ['query', field]);
        assert.equal(res.body.detail[0].type, 'string_invalid');
      });
    }

    // UTF-8 cannot carry a surrogate, so a query string cannot deliver a lone one: the encoded
    // surrogate is invalid UTF-8, which the query parser keeps as written. Stored as plain text.
    it('an encoded surrogate in the name or description: kept as the text written, never 500', async () => {
      for (const query of ['name=A%ED%A0%80&gender=f', 'name=A&gender=f&description=%ED%B0%80']) {
        const res = await upload(t, glbOf(JSON.stringify(face.json), face.bin), query);
        assert.equal(res.status, 201, JSON.stringify(res.body));
        assert.ok(!/[\uD800-\uDFFF]/.test(res.body.name + res.body.description));
      }
    });
  });

  describe('bodies over the limit', () => {
    const fiveMb = Buffer.alloc(5 * 1024 * 1024, 0x20);
    const json = Buffer.concat([Buffer.from('{"name":"'), Buffer.alloc(5 * 1024 * 1024, 0x61), Buffer.from('"}')]);

    it('a 5 MB JSON body sent whole: 413 in the detail shape, no reset', async () => {
      const res = await rawPost(t, '/v1/agent/create', json);
      assert.equal(res.status, 413);
      assert.deepEqual(res.body, { detail: 'Request body is too large' });
    });

    it('the same with fetch, the client most users have', async () => {
      const response = await fetch(`${t.url}/v1/agent/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: json,
      });
      assert.equal(response.status, 413);
      assert.deepEqual(await response.json(), { detail: 'Request body is too large' });
    });

    it('streamed chunked, without a length: 413, no reset', async () => {
      const res = await rawPost(t, '/v1/agent/create', json, { chunked: true });
      assert.equal(res.status, 413);
      assert.deepEqual(res.body, { detail: 'Request body is too large' });
    });

    it('with Expect: 100-continue: 413, no reset', async () => {
      const res = await rawPost(t, '/v1/agent/create', json, { expectContinue: true });
      assert.equal(res.status, 413);
      assert.deepEqual(res.body, { detail: 'Request body is too large' });
    });

    it('a face file over FACE_MAX_BYTES, whole and chunked: 422 invalid_face naming the limit, no reset', async () => {
      for (const chunked of [false, true]) {
        const res = await rawPost(t, '/v1/avatars?name=Big&gender=f', fiveMb, { chunked, type: 'model/gltf-binary' });
        assertCoded(res, 422, 'invalid_face');
        assert.match(res.body.detail.message, /1048576-byte limit/);
      }
    });

    it('a slow uploader on a keep-alive connection reads the 413, not a reset (declared length and chunked)', async () => {
      const size = 5 * 1024 * 1024;
      const start = `POST /v1/agent/create HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\n`;
      const declared = await slowUpload(t, `${start}Content-Length: ${size}\r\n\r\n`, size);
      assert.equal(declared.error, undefined, `the client saw ${declared.error}`);
      assert.match(declared.answer, /^HTTP\/1\.1 413 /);
      assert.ok(declared.answer.endsWith('{"detail":"Request body is too large"}'), declared.answer);
      // Chunked framing, one chunk per piece: 10000\r\n<64 KiB>\r\n … (the raw writer sends bare bytes, so frame them here).
      const chunked = await new Promise<{ answer: string; error?: string }>((resolve) => {
        const socket = net.connect({ host: '127.0.0.1', port: Number(new URL(t.url).port) });
        let answer = '';
        let error: string | undefined;
        socket.setEncoding('utf8').on('data', (d) => (answer += d));
        socket.on('error', (e) => (error = String(e)));
        socket.on('close', () => resolve({ answer, error }));
        socket.write(`${start}Transfer-Encoding: chunked\r\n\r\n`);
        let sent = 0;
        const next = () => {
          if (socket.destroyed) return;
          if (sent >= size) return void socket.end('0\r\n\r\n');
          socket.write(`10000\r\n${'a'.repeat(65536)}\r\n`);
          sent += 65536;
          setTimeout(next, 2);
        };
        next();
      });
      assert.equal(chunked.error, undefined, `the client saw ${chunked.error}`);
      assert.match(chunked.answer, /^HTTP\/1\.1 413 /);
    });

    it('a slow uploader of a body of the wrong type (5 MB text/plain; 5 MB text to the face route) reads the refusal (413 or 415), not a reset', async () => {
      const size = 5 * 1024 * 1024;
      for (const [path, status] of [
        ['/v1/agent/create', '41[35]'],
        ['/v1/avatars?name=A&gender=f', '41[35]'],
      ] as const) {
        const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: text/plain\r\nContent-Length: ${size}\r\n\r\n`;
        const answer = await slowUpload(t, head, size);
        assert.equal(answer.error, undefined, `${path}: the client saw ${answer.error}`);
        assert.match(answer.answer, new RegExp(`^HTTP/1\\.1 ${status} `), answer.answer.slice(0, 200));
        assert.match(answer.answer, /\{"detail":/);
      }
    });

    it('the server still answers on new connections afterwards', async () => {
      const res = await t.request('GET', '/v1/avatars');
      assert.equal(res.status, 200);
    });
  });
});
