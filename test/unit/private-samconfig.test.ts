import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSamWithPrivateConfig, samconfigWithOverrides } from '../../scripts/private-samconfig.js';

const OURS = `version = 0.1

[default.global.parameters]
stack_name = "cost-alert-relay"

[default.deploy.parameters]
capabilities = "CAPABILITY_IAM"
parameter_overrides = "AuthMethod=\\"Basic\\""
tags = "team=\\"finops\\""
`;

describe("the copy of samconfig.toml that sam reads for a deploy, the secrets' parameters in it", () => {
  it("keeps every other setting and line, and sets the deploy section's parameter_overrides", () => {
    const copy = samconfigWithOverrides(OURS, 'AuthMethod="Basic" DefaultDestinationUrl="https://hooks.slack.com/services/T/B/x"');
    expect(copy).toBe(
      OURS.replace(
        'parameter_overrides = "AuthMethod=\\"Basic\\""',
        'parameter_overrides = "AuthMethod=\\"Basic\\" DefaultDestinationUrl=\\"https://hooks.slack.com/services/T/B/x\\""',
      ),
    );
  });

  it('adds the setting to a deploy section without one, or adds the section', () => {
    const withoutSetting = OURS.replace(/^parameter_overrides.*\n/m, '');
    expect(samconfigWithOverrides(withoutSetting, 'A="1"')).toBe(
      withoutSetting.replace('[default.deploy.parameters]\n', '[default.deploy.parameters]\nparameter_overrides = "A=\\"1\\""\n'),
    );
    const withoutSection = 'version = 0.1\n[default.global.parameters]\nregion = "eu-west-1"\n';
    expect(samconfigWithOverrides(withoutSection, 'A="1"')).toBe(
      `${withoutSection}\n[default.deploy.parameters]\nparameter_overrides = "A=\\"1\\""\n`,
    );
  });

  it('writes a valid TOML string whatever a value holds: control characters are escaped', () => {
    const copy = samconfigWithOverrides(OURS, 'PlatformPassword="tab\tbell\u0007del\u007f"');
    expect(copy).toContain('parameter_overrides = "PlatformPassword=\\"tab\\tbell\\u0007del\\u007f\\""');
  });

  it('leaves the file as it is when there is nothing to set', () => {
    expect(samconfigWithOverrides(OURS, '')).toBe(OURS);
  });

  it('refuses a parameter_overrides it cannot read, rather than lose what it holds', () => {
    const list = OURS.replace(/^parameter_overrides.*$/m, 'parameter_overrides = ["AuthMethod=Basic"]');
    expect(() => samconfigWithOverrides(list, 'DefaultDestinationUrl="https://hooks.slack.com/services/T/B/x"')).toThrow(
      /parameter_overrides in a form npm run deploy does not read/,
    );
  });
});

describe('sam run with the private copy', () => {
  it('an end of sam by Ctrl-C is the deploy stopped, also before this process heard the signal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fake-sam-'));
    const sam = join(dir, 'sam');
    // sam ends as Python does on Ctrl-C, while this process is never signalled itself.
    writeFileSync(sam, `#!${process.execPath}\nprocess.exit(130);\n`, { mode: 0o755 });
    try {
      expect(await runSamWithPrivateConfig(sam, () => [], 'version = 0.1\n')).toEqual({ code: 130, signal: 'SIGINT' });
      writeFileSync(sam, `#!${process.execPath}\nprocess.exit(1);\n`, { mode: 0o755 });
      expect(await runSamWithPrivateConfig(sam, () => [], 'version = 0.1\n')).toEqual({ code: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
