/**
 * The house rules of `src/`, checked in CI by `npm run check:architecture` (dependency-cruiser).
 * LAYERS is the same list as the top of docs/architecture.md, bottom first: a folder may import its
 * own files and folders of lower layers only. Type-only imports count: they are arrows too.
 * A new capability folder must be given a layer here, or the check fails (`not-in-a-layer`).
 */
const LAYERS = [
  ['core'],
  ['speech', 'delivery', 'faces'],
  ['catalog'],
  ['accounts'],
  ['agents'],
  ['knowledge', 'embed', 'sessions'],
  ['realtime', 'brain', 'liveavatar'],
  ['conversation', 'billing', 'reference', 'player', 'knowledge-v2'],
  ['handoff', 'notifications', 'reports', 'console'],
  // The composition root, and the programs that start it.
  ['app.ts'],
  ['server.ts'],
  ['cli'],
];

/**
 * Arrows known to run up, each waiting for its fix; reported as warnings, not errors, so nothing new
 * can hide among them. None today; an entry is `{ room, from, to }` (path patterns).
 */
const KNOWN_UPWARD = [];

const folder = (name) => (name.endsWith('.ts') ? `src/${name.replace('.', '\\.')}$` : `src/${name}/`);
const known = LAYERS.flat();

const layerRules = LAYERS.flatMap((layer, level) =>
  layer.map((name) => {
    const allowed = [name, ...LAYERS.slice(0, level).flat()];
    return {
      name: `layer-${name}`,
      comment: `${name} (layer ${level}) may import only its own files and lower layers: ${allowed.slice(1).join(', ') || 'none'}`,
      severity: 'error',
      from: { path: `^${folder(name)}` },
      to: { path: '^src/', pathNot: [`^(${allowed.map(folder).join('|')})`, ...KNOWN_UPWARD.filter((k) => k.room === name).map((k) => k.to)] },
    };
  }),
);

module.exports = {
  forbidden: [
    ...layerRules,
    ...KNOWN_UPWARD.map((known, i) => ({
      name: `known-upward-${i + 1}`,
      comment: 'An arrow known to run up (see KNOWN_UPWARD): to be fixed, not copied.',
      severity: 'warn',
      from: { path: known.from },
      to: { path: known.to },
    })),
    {
      name: 'no-circular',
      comment: 'No import circles, not even inside a folder.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-in-a-layer',
      comment: 'Every folder of src/ has a layer in .dependency-cruiser.cjs and docs/architecture.md.',
      severity: 'error',
      from: { path: '^src/', pathNot: `^(${known.map(folder).join('|')})` },
      to: {},
    },
    {
      name: 'no-unresolvable',
      comment: 'An import that names no file.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/player/client/.*-worklet\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
