/**
 * Visual check of the generated faces (not part of the tests): renders each GLB in headless
 * Chromium with three.js and writes a contact sheet per face (neutral front, 3/4, profile,
 * jawOpen, viseme_aa, viseme_O, blink, smile) as PNG.
 * Usage: node --import tsx scripts/render-faces.ts [facesDir] [outDir] [chromiumPath]
 */
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const facesDir = path.resolve(process.argv[2] ?? 'build/faces');
const outDir = path.resolve(process.argv[3] ?? 'build/face-shots');
const browserPath = process.argv[4] ?? '/usr/bin/chromium';
const only = process.env.FACES?.split(',');
fs.mkdirSync(outDir, { recursive: true });

const page = `<!doctype html><html><body style="margin:0;background:#777">
<script type="importmap">{"imports":{"three":"/three/build/three.module.js","three/addons/":"/three/examples/jsm/"}}</script>
<script type="module">
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { MeshoptDecoder } from 'three/addons/libs/meshopt_decoder.module.js';
import { RoomEnvironment } from 'three/addons/environments/RoomEnvironment.js';
const W = 360, H = 420;
const views = [
  ['neutral', 0, {}], ['3/4', 0.6, {}], ['profile', 1.45, {}], ['jawOpen', 0.25, { jawOpen: 1 }],
  ['viseme_aa', 0, { viseme_aa: 1 }], ['viseme_O', 0, { viseme_O: 1 }], ['blink', 0, { eyeBlinkLeft: 1, eyeBlinkRight: 1 }], ['smile', 0.25, { mouthSmileLeft: 1, mouthSmileRight: 1 }],
];
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setSize(W * 4, H * 2);
renderer.toneMapping = THREE.ACESFilmicToneMapping;
renderer.outputColorSpace = THREE.SRGBColorSpace;
document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x8a8f96);
const pmrem = new THREE.PMREMGenerator(renderer);
scene.environment = pmrem.fromScene(new RoomEnvironment(), 0.04).texture;
scene.environmentIntensity = 0.45;
const key = new THREE.DirectionalLight(0xfff1e0, 2.2); key.position.set(0.6, 0.8, 1.2); scene.add(key);
const rim = new THREE.DirectionalLight(0xd0e0ff, 1.2); rim.position.set(-1, 0.6, -1); scene.add(rim);
scene.add(new THREE.HemisphereLight(0xdde6ff, 0x553322, 0.5));
const camera = new THREE.PerspectiveCamera(24, W / H, 0.05, 10);
window.renderFace = async (url) => {
  const gltf = await new GLTFLoader().setMeshoptDecoder(MeshoptDecoder).loadAsync(url);
  const root = gltf.scene; scene.add(root);
  const meshes = []; root.traverse((o) => { if (o.morphTargetDictionary) meshes.push(o); });
  renderer.setScissorTest(true);
  views.forEach(([name, yaw, morphs], i) => {
    for (const m of meshes) { m.morphTargetInfluences.fill(0); for (const [k, v] of Object.entries(morphs)) { const j = m.morphTargetDictionary[k]; if (j !== undefined) m.morphTargetInfluences[j] = v; } }
    const r = 0.62, cy = 0.0;
    camera.position.set(Math.sin(yaw) * r, cy + 0.02, Math.cos(yaw) * r); camera.lookAt(0, cy - 0.01, 0);
    const x = (i % 4) * W, y = (1 - Math.floor(i / 4)) * H;
    renderer.setViewport(x, y, W, H); renderer.setScissor(x, y, W, H); renderer.render(scene, camera);
  });
  scene.remove(root);
  return renderer.domElement.toDataURL('image/png');
};
window.ready = true;
</script></body></html>`;

const three = path.resolve('node_modules/three');
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url ?? '/');
  let file: string | null = null;
  if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  if (url.startsWith('/three/')) file = path.join(three, url.slice(7));
  if (url.startsWith('/faces/')) file = path.join(facesDir, path.basename(url));
  if (!file || !fs.existsSync(file)) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : 'application/octet-stream' }).end(fs.readFileSync(file));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as { port: number }).port;
const browser = await chromium.launch({
  executablePath: browserPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});
try {
  const tab = await browser.newPage();
  tab.on('console', (m) => console.log('[page]', m.text()));
  tab.on('pageerror', (e) => console.log('[page error]', e.message));
  await tab.goto(`http://127.0.0.1:${port}/`);
  await tab.waitForFunction('window.ready === true');
  const files = fs.readdirSync(facesDir).filter((f) => f.endsWith('.glb') && (!only || only.includes(path.basename(f, '.glb'))));
  for (const f of files) {
    const dataUrl = (await tab.evaluate(`window.renderFace('/faces/${f}')`)) as string;
    const out = path.join(outDir, f.replace('.glb', '.png'));
    fs.writeFileSync(out, Buffer.from(dataUrl.split(',')[1], 'base64'));
    console.log(out);
  }
} finally {
  await browser.close();
  server.close();
}
