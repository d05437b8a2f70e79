/**
 * Builds @presence/sdk: regenerates its types from what the app serves (scripts/sdk-generate.ts),
 * then compiles sdk/src to sdk/dist (JavaScript, declarations) with the SDK's own tsconfig.
 * Usage: node --import tsx scripts/sdk-build.ts [--no-generate]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Compiles the SDK into sdk/dist, or `outDir` (a clean build); throws with tsc's output when it fails. */
export function compileSdk(outDir = path.join(root, 'sdk', 'dist')): void {
  fs.rmSync(outDir, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'sdk', 'tsconfig.json'), '--outDir', outDir],
    { stdio: 'pipe', cwd: root },
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes('--no-generate')) {
    const { writeGeneratedFiles } = await import('./sdk-generate.js');
    await writeGeneratedFiles();
  }
  try {
    compileSdk();
  } catch (error) {
    process.stderr.write((error as { stdout?: Buffer }).stdout?.toString() ?? String(error));
    process.exit(1);
  }
  console.log('built sdk/dist');
}
