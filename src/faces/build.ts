/**
 * Builds one catalogue face into a GLB: the ICT FaceKit head (ict/build.ts) with hair and clothes.
 */
export { buildIctFace as buildFace, type BuiltFace } from './ict/build.js';
