/**
 * Visual check of the generated faces (not part of the tests): renders each GLB in headless
 * Chromium with three.js and writes a contact sheet per face (neutral front, 3/4, profile,
 * jawOpen, viseme_aa, viseme_O, blink, smile) as PNG, lit like the player page. With SHEETS=main,close
 * it also writes <id>-close.png (eye, lips, viseme_O lips, ear, hair from 3/4, back and above, closed eye).
 * Usage: [FACES=face01,face03] [SHEETS=main,close] node --import tsx scripts/render-faces.ts [facesDir] [outDir] [chromiumPath]
 */
import fs from 'node:fs';
import path from 'node:path';
import { IMPORT_MAP, openFacePage } from './face-page.js';

const facesDir = path.resolve(process.argv[2] ?? 'build/faces');
const outDir = path.resolve(process.argv[3] ?? 'build/face-shots');
const browserPath = process.argv[4] ?? '/usr/bin/chromium';
const only = process.env.FACES?.split(',');
/** SHEETS=main,close (default main): which contact sheets to render per face. */
const sheetNames = (process.env.SHEETS ?? 'main').split(',');
fs.mkdirSync(outDir, { recursive: true });

const page = `<!doctype html><html><body style="margin:0;background:#777">
${IMPORT_MAP}
<script type="module">
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { MeshoptDecoder } from 'three/addons/libs/meshopt_decoder.module.js';
import { RoomEnvironment } from 'three/addons/environments/RoomEnvironment.js';
const W = 360, H = 420;
// [name, yaw, morphs, camera distance, look-at y, look-at x, pitch, look-at z] (metres, radians)
const sheets = {
  main: [
    ['neutral', 0, {}], ['3/4', 0.6, {}], ['profile', 1.45, {}], ['jawOpen', 0.25, { jawOpen: 1 }],
    ['viseme_aa', 0, { viseme_aa: 1 }], ['viseme_O', 0, { viseme_O: 1 }], ['blink', 0, { eyeBlinkLeft: 1, eyeBlinkRight: 1 }], ['smile', 0.25, { mouthSmileLeft: 1, mouthSmileRight: 1 }],
  ],
  // close-ups for judging details: eye, lips at rest, viseme_O, ear in profile, hair from behind
  close: [
    ['eye', 0.15, {}, 0.16, 0.025, 0.032, 0, 0.035], ['lips', 0.1, {}, 0.16, -0.043, 0, 0, 0.05], ['lips O', 0.1, { viseme_O: 1 }, 0.16, -0.045, 0, 0, 0.05], ['ear', 1.5, {}, 0.22, 0.01, 0.07, 0, -0.045],
    ['3/4 hair', 0.9, {}, 0.45, 0.03, 0], ['back', 3.0, {}, 0.62, 0, 0], ['top', 0.2, {}, 0.5, 0.06, 0, 0.6], ['blink', 0.15, { eyeBlinkLeft: 1, eyeBlinkRight: 1 }, 0.16, 0.025, 0.032, 0, 0.035],
  ],
};
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setSize(W * 4, H * 2);
renderer.toneMapping = THREE.ACESFilmicToneMapping;
renderer.outputColorSpace = THREE.SRGBColorSpace;
document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x8a8f96);
const pmrem = new THREE.PMREMGenerator(renderer);
scene.environment = pmrem.fromScene(new RoomEnvironment(), 0.04).texture;
scene.environmentIntensity = 0.3;
// The player's studio rig (src/player/client/scene.ts): key high camera-left, fill low right, two rims behind.
const light = (c, k, x, y, z) => { const l = new THREE.DirectionalLight(c, k); l.position.set(x, y, z); scene.add(l); };
light(0xfff1e2, 3.1, -1.5, 1.1, 1.6);
light(0xd8e2ff, 0.55, 1.7, -0.1, 1.3);
light(0xfff4ea, 3.2, 1.2, 1.5, -1.5);
light(0xe8efff, 1.6, -1.4, 1.0, -1.3);
scene.add(new THREE.HemisphereLight(0xeef2ff, 0x2e2824, 0.4));
const camera = new THREE.PerspectiveCamera(24, W / H, 0.05, 10);
window.renderFace = async (url, sheet) => {
  const views = sheets[sheet];
  const gltf = await new GLTFLoader().setMeshoptDecoder(MeshoptDecoder).loadAsync(url);
  const root = gltf.scene; scene.add(root);
  const meshes = []; root.traverse((o) => { if (o.morphTargetDictionary) meshes.push(o); if (window.hide.includes(o.name)) o.visible = false; });
  renderer.setScissorTest(true);
  views.forEach(([name, yaw, morphs, dist, ty, tx, pitch, tz], i) => {
    for (const m of meshes) { m.morphTargetInfluences.fill(0); for (const [k, v] of Object.entries(morphs)) { const j = m.morphTargetDictionary[k]; if (j !== undefined) m.morphTargetInfluences[j] = v; } }
    const r = dist ?? 0.62, cy = ty ?? 0.0, cx = tx ?? 0, up = pitch ?? 0;
    const cz = tz ?? 0;
    camera.position.set(cx + Math.sin(yaw) * r * Math.cos(up), cy + 0.02 + Math.sin(up) * r, cz + Math.cos(yaw) * r * Math.cos(up)); camera.lookAt(cx, cy - 0.01, cz);
    const x = (i % 4) * W, y = (1 - Math.floor(i / 4)) * H;
    renderer.setViewport(x, y, W, H); renderer.setScissor(x, y, W, H); renderer.render(scene, camera);
  });
  scene.remove(root);
  return renderer.domElement.toDataURL('image/png');
};
window.ready = true;
</script></body></html>`;

const { tab, close } = await openFacePage(page, facesDir, browserPath, true);
try {
  // HIDE=Teeth,Tongue: leave out nodes (debugging what shows where)
  await tab.evaluate(`window.hide = ${JSON.stringify(process.env.HIDE?.split(',') ?? [])}`);
  const files = fs.readdirSync(facesDir).filter((f) => f.endsWith('.glb') && (!only || only.includes(path.basename(f, '.glb'))));
  for (const f of files) {
    for (const sheet of sheetNames) {
      const dataUrl = (await tab.evaluate(`window.renderFace('/faces/${f}', '${sheet}')`)) as string;
      const out = path.join(outDir, f.replace('.glb', sheet === 'main' ? '.png' : `-${sheet}.png`));
      fs.writeFileSync(out, Buffer.from(dataUrl.split(',')[1], 'base64'));
      console.log(out);
    }
  }
} finally {
  await close();
}
