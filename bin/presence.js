#!/usr/bin/env node
// Runs the TypeScript sources through tsx's loader (cached after the first run), so there is no
// separate build step between `npm install` and `npm start`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
