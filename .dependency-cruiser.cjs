// The layering rule (docs/ARCHITECTURE.md): handlers, scripts and the bench on top, then the
// pipelines, then the concerns they use, then the shared basics. A folder may import only
// from folders of a lower layer, so no import points up and no two folders import each other.
// A new lib/ folder must be given a layer here before anything may import it.
const LAYERS = [
  ['relay', 'retry', 'triage', 'rotation', 'directory', 'summary'],
  ['trend', 'cost-events'],
  ['chat-services', 'group', 'triage-link', 'escalation'],
  ['dedup', 'queue', 'owners'],
  ['delivery', 'auth', 'routing', 'api-key'],
  ['config', 'metrics', 'cost-api'],
  ['notify', 'chart'],
  ['chat', 'format', 'inbound'],
  ['aws', 'message', 'vocabulary'],
  ['transport', 'log', 'validation'],
  ['shared'],
];

const known = LAYERS.flat();
const layerRules = LAYERS.flatMap((layer, index) =>
  layer.map((folder) => {
    const notBelow = LAYERS.slice(0, index + 1)
      .flat()
      .filter((other) => other !== folder);
    return {
      name: `layer-${folder}`,
      comment: `lib/${folder} may import only from folders of a lower layer`,
      severity: 'error',
      from: { path: `^lib/${folder}/` },
      to: { path: `^lib/(${notBelow.join('|')})/` },
    };
  }),
);

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'lib-folder-without-layer',
      comment: 'every lib/ folder has a place in LAYERS (.dependency-cruiser.cjs)',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: `^lib/(?!(${known.join('|')})/)` },
    },
    {
      name: 'kinds-stay-in-their-folder',
      comment: 'a destination kind (lib/notify/<kind>/) imports no other kind; what kinds share lives beside them in lib/notify/ or below',
      severity: 'error',
      from: { path: '^lib/notify/([^/]+)/' },
      to: { path: '^lib/notify/(?!$1/)[^/]+/' },
    },
    {
      name: 'retry-jobs-listed-once',
      comment:
        'a kind of retry-queue job (lib/retry/jobs/<kind>.ts) is imported only by the one list of them, lib/retry/jobs.ts: the batch loop and every other kind know none by name',
      severity: 'error',
      from: { pathNot: '^lib/retry/jobs\\.ts$' },
      to: { path: '^lib/retry/jobs/' },
    },
    {
      name: 'lib-imports-no-entry-point',
      comment: 'lib/ is imported by handlers, scripts, the bench and the simulation, never the other way round',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^(functions|scripts|bench|sim|test)/' },
    },
    {
      name: 'handlers-use-lib-only',
      comment: 'a handler adapts the Lambda event and calls lib/; it imports no script, bench or other handler',
      severity: 'error',
      from: { path: '^functions/([^/]+)/' },
      to: { path: '^(scripts|bench|sim|test)/|^functions/(?!$1/)' },
    },
    {
      name: 'no-circular',
      comment: 'no module reaches itself through its imports',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'every import resolves (aws-lambda holds types only)',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, pathNot: '^aws-lambda$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.mjs', '.js', '.json'],
    },
  },
};
