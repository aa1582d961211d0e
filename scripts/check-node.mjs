// Run before npm start and npm test (package.json's prestart and pretest): on a Node.js older
// than package.json's engines, say so in one line, rather than fail later somewhere inside a tool.
import { readFileSync } from 'node:fs';

/** The lowest version a `>=X.Y.Z` range allows, or undefined for another form of range. */
export function lowestAllowed(range) {
  const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(String(range).trim());
  return match ? [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)] : undefined;
}

/** Why `version` (`v20.20.2`) cannot run the project, or undefined when it can. */
export function unsupportedNode(version, range) {
  const floor = lowestAllowed(range);
  if (!floor) return undefined;
  const have = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) > floor[i]) return undefined;
    if ((have[i] ?? 0) < floor[i]) {
      return `Cost Alert Relay needs Node.js ${floor.join('.')} or newer (package.json "engines"; Lambda runs 24, .nvmrc says so); this is ${version}. Switch with nvm use, or install a newer Node.js.`;
    }
  }
  return undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const problem = unsupportedNode(process.version, engines?.node ?? '');
  if (problem) {
    console.error(problem);
    process.exit(1);
  }
}
