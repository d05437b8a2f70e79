/**
 * Contact sheet of every built-in face (issue 14's "judged by looking"): one row per face, columns
 * close and mid camera × neutral, speaking "aa", "O", "PP", smiling, blinking, and at mid camera from
 * three-quarters front and behind (hair, neckline, ponytail), rendered in headless
 * Chromium with three.js under the player's studio lights. Writes one image (JPEG, or PNG when the name ends in .png; default
 * docs/faces-contact-sheet.jpg); open it and compare the faces side by side.
 * Usage: [FACES=face01,face03] [MOUTH=1] node --import tsx scripts/face-contact-sheet.ts [facesDir] [outFile] [chromiumPath]
 *   MOUTH=1 adds close-ups of the open mouth (jawOpen 0.6) and the lips at PP.
 */
import fs from 'node:fs';
import path from 'node:path';
import { IMPORT_MAP, openFacePage } from './face-page.js';

const facesDir = path.resolve(process.argv[2] ?? 'build/faces');
const outFile = path.resolve(process.argv[3] ?? 'docs/faces-contact-sheet.jpg');
const browserPath = process.argv[4] ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const only = process.env.FACES?.split(',');
const mouth = process.env.MOUTH === '1';
const files = fs
  .readdirSync(facesDir)
  .filter((f) => /^face\d+\.glb$/.test(f) && (!only || only.includes(path.basename(f, '.glb'))))
  .sort();
const W = 150,
  H = 176;
const page = `<!doctype html><html><body style="margin:0;background:#777">
${IMPORT_MAP}
<script type="module">
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { MeshoptDecoder } from 'three/addons/libs/meshopt_decoder.module.js';
import { RoomEnvironment } from 'three/addons/environments/RoomEnvironment.js';
const W = ${W}, H = ${H};
// [label, morphs, camera distance (m), look-at y, yaw (radians round the head, 0 = front)]
const A = { viseme_aa: 1, jawOpen: 0.35 }, O = { viseme_O: 1, jawOpen: 0.2 }, PP = { viseme_PP: 1, jawOpen: 0.2 };
const SMILE = { mouthSmileLeft: 0.8, mouthSmileRight: 0.8, cheekSquintLeft: 0.5, cheekSquintRight: 0.5, eyeSquintLeft: 0.25, eyeSquintRight: 0.25 };
const BLINK = { eyeBlinkLeft: 1, eyeBlinkRight: 1 };
const views = [
  ['close', {}, 0.55, 0.01], ['close aa', A, 0.55, 0.01], ['close O', O, 0.55, 0.01], ['close PP', PP, 0.55, 0.01], ['close smile', SMILE, 0.55, 0.01], ['close blink', BLINK, 0.55, 0.01],
  ['mid', {}, 1.1, -0.06], ['mid aa', A, 1.1, -0.06], ['mid smile', SMILE, 1.1, -0.06], ['mid 3/4', {}, 1.1, -0.06, 0.8], ['mid back 3/4', {}, 1.1, -0.06, 2.4],
  ...(${mouth} ? [['mouth jawOpen 0.6', { jawOpen: 0.6 }, 0.2, -0.045], ['lips PP', PP, 0.2, -0.04], ['mouth aa', A, 0.2, -0.045]] : []),
];
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setSize(W * views.length, H * ${files.length});
renderer.toneMapping = THREE.ACESFilmicToneMapping;
renderer.outputColorSpace = THREE.SRGBColorSpace;
renderer.toneMappingExposure = 0.88; // the player's exposure (src/player/client/scene.ts)
document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x8a8f96);
const pmrem = new THREE.PMREMGenerator(renderer);
scene.environment = pmrem.fromScene(new RoomEnvironment(), 0.04).texture;
scene.environmentIntensity = 0.3;
// The player's studio rig (src/player/client/scene.ts): key high camera-left, fill low right, two rims behind.
const light = (c, k, x, y, z) => { const l = new THREE.DirectionalLight(c, k); l.position.set(x, y, z); scene.add(l); };
light(0xfff1e2, 2.8, -1.4, 1.7, 1.5);
light(0xd8e2ff, 0.55, 1.7, -0.1, 1.3);
light(0xfff4ea, 3.2, 1.2, 1.5, -1.5);
light(0xe8efff, 1.6, -1.4, 1.0, -1.3);
scene.add(new THREE.HemisphereLight(0xeef2ff, 0x2e2824, 0.4));
const camera = new THREE.PerspectiveCamera(24, W / H, 0.05, 10);
window.renderRow = async (url, row) => {
  const gltf = await new GLTFLoader().setMeshoptDecoder(MeshoptDecoder).loadAsync(url);
  const root = gltf.scene; scene.add(root);
  const meshes = []; root.traverse((o) => { if (o.morphTargetDictionary) meshes.push(o); });
  renderer.setScissorTest(true);
  views.forEach(([name, morphs, dist, ty, yaw = 0], i) => {
    for (const m of meshes) { m.morphTargetInfluences.fill(0); for (const [k, v] of Object.entries(morphs)) { const j = m.morphTargetDictionary[k]; if (j !== undefined) m.morphTargetInfluences[j] = v; } }
    const r = 0.06 + dist, a = yaw + 0.04 * dist / r;
    camera.position.set(Math.sin(a) * r, ty + 0.02, (yaw ? 0 : 0.03) + Math.cos(a) * r); camera.lookAt(0, ty, yaw ? 0 : 0.03);
    const x = i * W, y = (${files.length} - 1 - row) * H;
    renderer.setViewport(x, y, W, H); renderer.setScissor(x, y, W, H); renderer.render(scene, camera);
  });
  scene.remove(root);
};
window.snapshot = (type) => renderer.domElement.toDataURL(type, 0.88);
window.ready = true;
</script></body></html>`;

const { tab, close } = await openFacePage(page, facesDir, browserPath);
try {
  for (const [row, f] of files.entries()) {
    await tab.evaluate(`window.renderRow('/faces/${f}', ${row})`);
    console.log(f);
  }
  const dataUrl = (await tab.evaluate(`window.snapshot('${outFile.endsWith('.png') ? 'image/png' : 'image/jpeg'}')`)) as string;
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, Buffer.from(dataUrl.split(',')[1], 'base64'));
  console.log(`${files.length} faces -> ${outFile}`);
} finally {
  await close();
}
