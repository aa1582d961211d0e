// `npm run deploy [-- sam deploy options]`: builds the bundles, then deploys them with SAM, so a
// stale dist/ can never be deployed. The first deploy is guided; later ones reuse the answers
// that SAM saved in samconfig.toml (ignored by git: it holds your account's choices).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const here = new URL('.', import.meta.url).pathname;
const project = process.cwd();
const args = process.argv.slice(2);

const sam = process.env['SAM_CLI'] ?? 'sam';
if (spawnSync(sam, ['--version'], { stdio: 'ignore' }).status !== 0) {
  console.error('The AWS SAM CLI is needed to deploy and was not found (sam --version failed).');
  console.error('Install it: https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html');
  process.exit(2);
}

// BUILD_SCRIPT lets the tests stand in for the build, which would replace dist/ under other tests' feet.
const built = spawnSync(process.execPath, [process.env['BUILD_SCRIPT'] ?? join(here, 'build.mjs')], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const config = join(project, 'samconfig.toml');
const guided = !existsSync(config) && !args.includes('--guided');
if (!existsSync(config)) {
  copyFileSync(join(project, 'samconfig.example.toml'), config);
  console.log('First deploy: samconfig.toml created from samconfig.example.toml; SAM will ask for the settings and save them there.');
}
// Never `sam build`: template.yaml's CodeUri folders are the bundles just built and tested.
const deployed = spawnSync(sam, ['deploy', ...(guided ? ['--guided'] : []), ...args], { stdio: 'inherit' });
process.exit(deployed.status ?? 1);
