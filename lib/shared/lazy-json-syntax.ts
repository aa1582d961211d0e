// Bundled on its own (scripts/esbuild-options.mjs): the relay loads the scanner after a failed parse only.
export { jsonSyntaxError } from './json-syntax.js';
