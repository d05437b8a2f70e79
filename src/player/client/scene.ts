/**
 * The 3D stage: renderer (ACES tone mapping, sRGB output), three-point lighting scaled by
 * `face_light`, a soft room environment for skin and eye highlights, the face GLB (meshopt) on a
 * neck pivot, and eyes that keep contact with the camera.
 */
import {
  ACESFilmicToneMapping,
  BufferAttribute,
  DataTexture,
  Box3,
  LoaderUtils,
  DirectionalLight,
  Group,
  HemisphereLight,
  type Mesh,
  FrontSide,
  LinearMipmapLinearFilter,
  LinearMipmapNearestFilter,
  type Material,
  MeshLambertMaterial,
  MeshStandardMaterial,
  type Object3D,
  PerspectiveCamera,
  PMREMGenerator,
  Quaternion,
  SRGBColorSpace,
  Scene,
  type Texture,
  Vector3,
  WebGLRenderer,
} from 'three';
import { GLTFLoader, type GLTFLoaderPlugin, type GLTFParser } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { MeshoptDecoder } from 'three/examples/jsm/libs/meshopt_decoder.module.js';
import { RoomEnvironment } from 'three/examples/jsm/environments/RoomEnvironment.js';
import type { Framing } from './camera.js';
import { CpuMorpher } from './cpumorph.js';
import { compactVertices, shippedLevel, simplifyMeshes, type LodReport } from '../../faces/lod.js';
import type { IdlePose } from './idle.js';

const KEY = 2.8;
const EXPOSURE = 0.88;
const MAX_EYE = 0.45; // radians an eye may turn

export interface Face {
  root: Group;
  pivot: Group;
  pivotRest: Vector3;
  body: Object3D | null;
  bodyRest: Vector3 | null;
  meshes: Mesh[];
  eyes: { node: Object3D; rest: Quaternion }[];
  framing: Framing;
  center: Vector3;
}

/**
 * Software GL: a software rasteriser builds a pipeline for each shader program at the first draw
 * that uses it, and a physically based program (sheen, clearcoat, specular, normal map) costs it
 * several times a Lambert one to build. A new player's first frame with the face waited 0.75–0.9 s
 * for those pipelines beside another player; with every material of the face a Lambert one (its
 * colour map and factors kept) and the materials made alike (oneFamily(): four programs), the first
 * draw takes about 0.3 s (docs/player.md, "Software GL"). At a player's size on a machine without a GPU the normal map's
 * pores, the skin's sheen and the eyes' catchlight are what is given up.
 */
function cheaper<M extends Mesh['material']>(mat: M): M {
  if (!(mat instanceof MeshStandardMaterial)) return mat;
  // Alpha-tested or blended hair (shells, the fringe) is drawn front faces only: no early depth
  // rejection there, and the back faces read alike. Lashes keep both sides (they are thin cards).
  const hair = (mat.alphaTest > 0 || mat.name === 'HairSoft') && !/lash/i.test(mat.name);
  const lambert = new MeshLambertMaterial({
    name: mat.name,
    map: mat.map,
    color: mat.color,
    emissive: mat.emissive,
    emissiveMap: mat.emissiveMap,
    emissiveIntensity: mat.emissiveIntensity,
    alphaTest: mat.alphaTest,
    alphaMap: mat.alphaMap,
    side: hair ? FrontSide : mat.side,
    transparent: mat.transparent,
    opacity: mat.opacity,
    depthWrite: mat.depthWrite,
    vertexColors: mat.vertexColors,
  });
  mat.dispose();
  return lambert as unknown as M;
}

let whitePixel: DataTexture | undefined;

/**
 * Software GL: every program the face needs is a pipeline SwiftShader builds at its first draw, so
 * the Lambert materials are made alike. Each gets a colour map (one white pixel where it had none:
 * the mouth, teeth, tongue, shirt) and vertex colours (white where the mesh had none: the skin,
 * irises, eye shadow, lashes), and the opaque parts of the face then share one program, the
 * blended ones another: four programs instead of seven.
 */
function oneFamily(mesh: Mesh): void {
  const geometry = mesh.geometry;
  if (!geometry.attributes.uv) return; // a map needs texture coordinates
  const materials = (Array.isArray(mesh.material) ? mesh.material : [mesh.material]).filter((m) => m instanceof MeshLambertMaterial);
  for (const mat of materials) {
    if (!mat.map) {
      if (!whitePixel) {
        whitePixel = new DataTexture(new Uint8Array([255, 255, 255, 255]), 1, 1);
        whitePixel.needsUpdate = true;
      }
      mat.map = whitePixel;
    }
    mat.vertexColors = true;
  }
  // Checked on the mesh, not the material: a material shared with a mesh seen earlier already
  // says vertexColors, and this mesh still needs the colours it reads.
  if (materials.length && !geometry.attributes.color)
    geometry.setAttribute('color', new BufferAttribute(new Uint8Array(geometry.attributes.position.count * 3).fill(255), 3, true));
}

/**
 * Software GL draws Lambert materials (cheaper()), which use a material's colour and emissive maps
 * only: the others (the skin's 2,048-pixel normal map, its roughness) are taken out of the glTF
 * before its materials are read, so they are neither decoded nor held.
 */
export function onlyColourTextures(parser: Pick<GLTFParser, 'json'>): GLTFLoaderPlugin {
  for (const material of (parser.json.materials ?? []) as GltfMaterialJson[]) {
    delete material.normalTexture;
    delete material.occlusionTexture;
    if (material.pbrMetallicRoughness) delete material.pbrMetallicRoughness.metallicRoughnessTexture;
    // The layers' own textures (clearcoat, sheen, specular…): Lambert draws none of the layers.
    for (const extension of Object.values(material.extensions ?? {}))
      for (const key of Object.keys(extension)) if (key.endsWith('Texture')) delete extension[key];
  }
  return { name: 'presence_colour_textures_only' };
}

interface GltfMaterialJson {
  normalTexture?: unknown;
  occlusionTexture?: unknown;
  pbrMetallicRoughness?: { metallicRoughnessTexture?: unknown };
  extensions?: Record<string, Record<string, unknown>>;
}

/**
 * Light level of detail: textures sampled bilinearly from the nearest mip level rather than
 * blended between two (trilinear). A software rasteriser fetches half the texels; at player sizes
 * the skin, eyes and hair read the same (docs/player.md, "Software GL").
 */
function lighterSampling(mat: Material): void {
  for (const value of Object.values(mat)) {
    const t = value as Texture | null;
    if (t?.isTexture && t.minFilter === LinearMipmapLinearFilter) t.minFilter = LinearMipmapNearestFilter;
  }
}

/**
 * The face GLB's bytes. The page calls this before it builds the stage, so the download (or the
 * preload's response) is read while WebGL starts. Steps are marked (`face:…` performance marks)
 * for window.presence.timings.steps.
 */
export async function fetchFace(url: string): Promise<ArrayBuffer> {
  performance.mark('face:fetch');
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`face ${url}: HTTP ${response.status}`);
  const data = await response.arrayBuffer();
  performance.mark('face:fetched');
  return data;
}

/** Every texture the meshes' materials use. */
function faceTextures(meshes: Mesh[]): Texture[] {
  const textures = new Set<Texture>();
  for (const m of meshes)
    for (const mat of Array.isArray(m.material) ? m.material : [m.material])
      for (const v of Object.values(mat)) if ((v as Texture | null)?.isTexture) textures.add(v as Texture);
  return [...textures];
}

/** Texture width the light level uploads at most. */
const LIGHT_TEXTURE = 1024;

/**
 * Light level: textures wider than LIGHT_TEXTURE are scaled down before they are uploaded (off the
 * main thread, by createImageBitmap). A 2048-pixel sRGB skin map took 0.4 s of SwiftShader time
 * to upload and mipmap, most of the first frame's wait; a face a few hundred pixels high on screen
 * samples the same mip levels either way.
 */
async function smallerTextures(meshes: Mesh[]): Promise<void> {
  await Promise.all(
    faceTextures(meshes).map(async (t) => {
      const image = t.image as ImageBitmap | HTMLImageElement | undefined;
      if (!image || typeof createImageBitmap !== 'function' || !(image.width > LIGHT_TEXTURE)) return;
      try {
        const scale = LIGHT_TEXTURE / image.width;
        const smaller = await createImageBitmap(image, {
          resizeWidth: LIGHT_TEXTURE,
          resizeHeight: Math.max(1, Math.round(image.height * scale)),
          resizeQuality: 'high',
          premultiplyAlpha: 'none',
          colorSpaceConversion: 'none',
        });
        if ('close' in image) image.close();
        t.image = smaller;
        t.needsUpdate = true;
      } catch {
        /* keep the full size */
      }
    }),
  );
}

/** Whether WebGL runs on a software rasteriser (SwiftShader, llvmpipe): render cheaper there. */
export function softwareGL(): boolean {
  try {
    const c = document.createElement('canvas');
    const gl = (c.getContext('webgl2') ?? c.getContext('webgl')) as WebGLRenderingContext | null;
    if (!gl) return false;
    const ext = gl.getExtension('WEBGL_debug_renderer_info');
    const name = String(ext ? gl.getParameter(ext.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return /swiftshader|llvmpipe|softpipe|software|basic render/i.test(name);
  } catch {
    return false;
  }
}

export class Stage {
  readonly renderer: WebGLRenderer;
  readonly scene = new Scene();
  private readonly key = new DirectionalLight(0xfff1e2, KEY);
  private readonly fill = new DirectionalLight(0xd8e2ff, 0.55);
  private readonly rim = new DirectionalLight(0xfff4ea, 3.2);
  private readonly rim2 = new DirectionalLight(0xe8efff, 1.6);
  private readonly hemi = new HemisphereLight(0xeef2ff, 0x2e2824, 0.32);
  face: Face | null = null;
  faceLight = 1;
  private cpuMorph: CpuMorpher | null = null;
  readonly software = softwareGL();
  /** Level of detail: `light` simplifies the face's triangles (the default on software GL). */
  readonly detail: 'full' | 'light';
  /** The face's materials as drawn: each one's three.js type and the texture slots it uses. */
  faceMaterials(): { name: string; type: string; maps: string[] }[] {
    const out: { name: string; type: string; maps: string[] }[] = [];
    this.face?.root.traverse((o) => {
      const m = o as Mesh;
      if (!m.isMesh) return;
      for (const mat of Array.isArray(m.material) ? m.material : [m.material])
        out.push({
          name: mat.name,
          type: mat.type,
          maps: Object.entries(mat)
            .filter(([, v]) => (v as Texture | null)?.isTexture)
            .map(([k]) => k),
        });
    });
    return out;
  }

  /** What the light level of detail did to the current face, and how long it took (none at full detail). */
  lod: { meshes: LodReport[]; ms: number } = { meshes: [], ms: 0 };

  constructor(canvas: HTMLCanvasElement, detail: 'auto' | 'full' | 'light' = 'auto') {
    this.detail = detail === 'auto' ? (this.software ? 'light' : 'full') : detail;
    // Multisampling costs a software rasteriser dearly; elsewhere it is cheap and worth it.
    // Transparent: the backdrop is an element under the canvas (backdrop.ts), composited by the
    // browser rather than shaded by WebGL every frame.
    this.renderer = new WebGLRenderer({ canvas, antialias: !this.software, alpha: true, premultipliedAlpha: true, powerPreference: 'high-performance' });
    this.renderer.setClearColor(0x000000, 0);
    this.renderer.toneMapping = ACESFilmicToneMapping;
    this.renderer.toneMappingExposure = EXPOSURE;
    this.renderer.outputColorSpace = SRGBColorSpace;
    // A soft studio environment for skin sheen and eye reflections, on hardware GL only: its shader
    // takes seconds to compile on a software rasteriser, where the lights alone do the work.
    if (!this.software) {
      const pmrem = new PMREMGenerator(this.renderer);
      this.scene.environment = pmrem.fromScene(new RoomEnvironment(), 0.04).texture;
      this.scene.environmentIntensity = 0.3;
      pmrem.dispose();
    }
    // A second rim light is a luxury a software rasteriser cannot afford.
    for (const l of this.software ? [this.key, this.fill, this.rim] : [this.key, this.fill, this.rim, this.rim2]) this.scene.add(l, l.target);
    this.scene.add(this.hemi);
  }

  /**
   * Exposes for the face, as a photographer would: darker skin tones get more exposure, fair ones
   * a touch less (the painted backdrop is not tone mapped, so it keeps its colours).
   */
  setSkinTone(hex: unknown): void {
    const m = typeof hex === 'string' ? /^#?([0-9a-f]{6})$/i.exec(hex.trim()) : null;
    if (!m) return;
    const n = parseInt(m[1], 16);
    const lin = (c: number) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
    const lum = 0.2126 * lin(n >> 16) + 0.7152 * lin((n >> 8) & 255) + 0.0722 * lin(n & 255);
    const comp = Math.min(1.45, Math.max(0.9, (0.42 / Math.max(lum, 0.01)) ** 0.3));
    this.renderer.toneMappingExposure = EXPOSURE * comp;
  }

  setFaceLight(v: number): void {
    this.faceLight = Math.min(1.5, Math.max(0.5, Number.isFinite(v) ? v : 1));
    this.key.intensity = KEY * this.faceLight;
  }

  /** Places the lights around the head: key high camera-left, fill low right, two rims behind. */
  private placeLights(center: Vector3, size: number): void {
    const at = (l: DirectionalLight, x: number, y: number, z: number) => {
      l.position.set(center.x + x * size, center.y + y * size, center.z + z * size);
      l.target.position.copy(center);
    };
    at(this.key, -1.4, 1.7, 1.5);
    at(this.fill, 1.7, -0.1, 1.3);
    at(this.rim, 1.2, 1.5, -1.5);
    at(this.rim2, -1.4, 1.0, -1.3);
  }

  /** `data`: the GLB's bytes when the caller already fetches them (fetchFace), else fetched here. */
  async loadFace(url: string, data: Promise<ArrayBuffer> = fetchFace(url)): Promise<Face> {
    const bytes = await data;
    const loader = new GLTFLoader();
    loader.setMeshoptDecoder(MeshoptDecoder);
    if (this.software) loader.register(onlyColourTextures);
    const gltf = await loader.parseAsync(bytes, LoaderUtils.extractUrlBase(new URL(url, location.href).href));
    performance.mark('face:parsed');
    const model = gltf.scene;
    const meshes: Mesh[] = [];
    let eyeL: Object3D | undefined;
    let eyeR: Object3D | undefined;
    model.traverse((o) => {
      if ((o as Mesh).isMesh) {
        const m = o as Mesh;
        meshes.push(m);
        m.frustumCulled = false;
        if (this.software) m.material = Array.isArray(m.material) ? m.material.map(cheaper) : cheaper(m.material);
        if (this.detail === 'light') for (const mat of Array.isArray(m.material) ? m.material : [m.material]) lighterSampling(mat);
      }
      if (/^EyeLeft/i.test(o.name) && !eyeL) eyeL = o;
      if (/^EyeRight/i.test(o.name) && !eyeR) eyeR = o;
    });
    const t0 = performance.now();
    // The light level: shipped in the GLB (built-in faces), else simplified here (uploaded faces);
    // then only the vertices its triangles use are kept (CPU morphs and uploads handle a fifth).
    this.lod = { meshes: this.detail === 'light' ? ((await shippedLevel(meshes, gltf.parser)) ?? (await simplifyMeshes(meshes))) : [], ms: 0 };
    if (this.detail === 'light') for (const m of meshes) compactVertices(m);
    if (this.software) for (const m of meshes) oneFamily(m);
    this.lod.ms = performance.now() - t0;
    performance.mark('face:lod');
    // Issue the GPU work now, so the GPU process compiles shaders and uploads textures while this
    // thread finishes the face (the first frame then waits for little): the final materials and,
    // on software GL, the CPU morphs (which choose the plain vertex shader) first.
    const cpuMorph = this.software ? new CpuMorpher(meshes) : null;
    this.renderer.compile(model, new PerspectiveCamera(), this.scene);
    if (this.detail === 'light') await smallerTextures(meshes);
    for (const t of faceTextures(meshes)) this.renderer.initTexture(t);
    model.updateMatrixWorld(true);
    const box = new Box3().setFromObject(model);
    const size = box.getSize(new Vector3());
    const center = box.getCenter(new Vector3());
    // Eyes: from the eye nodes, else an estimate on the head's front.
    const eyes = new Vector3();
    if (eyeL && eyeR) {
      eyes.addVectors(eyeL.getWorldPosition(new Vector3()), eyeR.getWorldPosition(new Vector3())).multiplyScalar(0.5);
    } else {
      eyes.set(center.x, box.min.y + size.y * 0.62, box.max.z - size.z * 0.15);
    }
    // Head height: the model may carry neck and shoulders; take the head as twice eyes-to-crown.
    const headHeight = Math.min(size.y, (box.max.y - eyes.y) * 2.05);
    const headWidth = Math.min(size.x, headHeight * 0.78);
    // The torso stays put while the head moves: it hangs from the root, not the neck pivot.
    let body: Object3D | undefined;
    model.traverse((o) => {
      if (!body && /^(Body|Torso|Shirt)/i.test(o.name)) body = o;
    });
    const bodyTop = body ? new Box3().setFromObject(body).max.y : -Infinity;
    // Neck pivot: at the base of the neck (the collar) when there is a torso, else under the chin;
    // behind the face, so nods and turns move head and neck naturally.
    const pivotY = Math.max(eyes.y - headHeight * 0.95, Math.min(eyes.y - headHeight * 0.45, bodyTop - headHeight * 0.05));
    const pivotPoint = new Vector3(eyes.x, pivotY, eyes.z - headHeight * 0.35);
    const root = new Group();
    const pivot = new Group();
    pivot.position.copy(pivotPoint);
    model.position.sub(pivotPoint);
    pivot.add(model);
    root.add(pivot);
    root.updateMatrixWorld(true);
    if (body) root.attach(body);
    if (this.face) this.scene.remove(this.face.root);
    this.cpuMorph = cpuMorph;
    this.scene.add(root);
    const eyeList = [eyeL, eyeR].filter((e): e is Object3D => !!e).map((node) => ({ node, rest: node.quaternion.clone() }));
    this.face = {
      root,
      pivot,
      pivotRest: pivotPoint.clone(),
      body: body ?? null,
      bodyRest: body ? body.position.clone() : null,
      meshes,
      eyes: eyeList,
      framing: { eyes, headHeight, headWidth, bottom: box.min.y },
      center,
    };
    this.placeLights(new Vector3(eyes.x, eyes.y, eyes.z), headHeight * 4);
    return this.face;
  }

  private readonly tmpV = new Vector3();
  private readonly tmpQ = new Quaternion();
  private readonly tmpQ2 = new Quaternion();
  private readonly fwd = new Vector3(0, 0, 1);

  /** Applies the idle head pose and points the eyes at `lookAt` (offset by the gaze). */
  pose(p: IdlePose, lookAt: Vector3): void {
    const f = this.face;
    if (!f) return;
    f.pivot.rotation.set(p.pitch, p.yaw, p.roll, 'YXZ');
    // Breathing lifts shoulders and head together.
    const rise = p.rise * f.framing.headHeight;
    f.pivot.position.y = f.pivotRest.y + rise;
    if (f.body && f.bodyRest) f.body.position.y = f.bodyRest.y + rise * 0.8;
    f.root.updateMatrixWorld(true);
    for (const eye of f.eyes) {
      const parent = eye.node.parent;
      if (!parent) continue;
      // Direction to the camera in the eye parent's space, rotated by the gaze offset.
      const worldPos = eye.node.getWorldPosition(this.tmpV.set(0, 0, 0));
      const dir = lookAt.clone().sub(worldPos).normalize();
      const yawQ = this.tmpQ2.setFromAxisAngle(new Vector3(0, 1, 0), p.gazeYaw);
      dir.applyQuaternion(yawQ);
      dir.y += Math.sin(p.gazePitch);
      dir.normalize();
      const parentQ = parent.getWorldQuaternion(this.tmpQ).invert();
      dir.applyQuaternion(parentQ);
      // Rest orientation looks along the parent's +Z (glTF forward); limit the turn.
      const restFwd = this.fwd.clone().applyQuaternion(eye.rest);
      const angle = restFwd.angleTo(dir);
      const turn = new Quaternion().setFromUnitVectors(restFwd, dir);
      if (angle > MAX_EYE) turn.slerp(new Quaternion(), 1 - MAX_EYE / angle);
      eye.node.quaternion.copy(turn.multiply(eye.rest));
    }
  }

  /** Call after the morph influences were written, before rendering. */
  render(camera: import('three').Camera): void {
    this.cpuMorph?.update();
    this.renderer.render(this.scene, camera);
  }

  /**
   * A check of whether the GPU has finished what was drawn so far (a WebGL2 fence): render() returns
   * once the commands are issued, and a software rasteriser may still be building the pipelines the
   * first frame needs (on a busy 2-core machine: 50–80 ms after render() returned, and 0.6 s when the
   * shaders' uniforms had been read before, which left render() nothing to wait for).
   * Without WebGL2 the check answers true at once.
   */
  drawn(): () => boolean {
    const gl = this.renderer.getContext();
    if (!(typeof WebGL2RenderingContext === 'function' && gl instanceof WebGL2RenderingContext)) return () => true;
    const sync = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (!sync) return () => true;
    gl.flush();
    let done = false;
    return () => {
      if (done) return true;
      done = gl.isContextLost() || gl.getSyncParameter(sync, gl.SYNC_STATUS) === gl.SIGNALED;
      if (done && !gl.isContextLost()) gl.deleteSync(sync);
      return done;
    };
  }

  resize(width: number, height: number, pixelRatio: number): void {
    this.renderer.setPixelRatio(pixelRatio);
    this.renderer.setSize(width, height, false);
  }
}
