// What the operator commands read from a deployed stack: its outputs and the relay configuration.
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** A command-line mistake or an unusable stack: the message is for the operator, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * The relay configuration secret holds something the command cannot use (not JSON, wrong shape).
 * The message names the problem by path in our words, never a value: exit code 1.
 */
export class SecretContentError extends Error {
  override name = 'SecretContentError';
}

/** Why a secret that is not JSON is a problem, and how to mend it, without a word of what it holds. */
export function notJsonMessage(secretId: string): string {
  return (
    `The relay configuration secret ${secretId} is not valid JSON, so the relay cannot use it (it answers 503). ` +
    'Its content is not shown: it may hold passwords and webhook URLs. ' +
    `Get it into a file readable only by you with npm run config -- pull --secret-id ${secretId} --output FILE, mend it, check it with validate, then push it.`
  );
}

/**
 * The region as the AWS CLI finds it: --region, then AWS_REGION, then AWS_DEFAULT_REGION. Undefined
 * leaves it to the SDK, which reads the profile's region (AWS_PROFILE, ~/.aws/config). The SDK
 * alone does not read AWS_DEFAULT_REGION, which the AWS CLI and many guides set.
 */
export function regionFrom(flag?: string): string | undefined {
  for (const value of [flag, process.env['AWS_REGION'], process.env['AWS_DEFAULT_REGION']]) {
    if (value?.trim()) return value.trim();
  }
  return undefined;
}

/** Options for an AWS SDK client: the region found as the AWS CLI finds it, the rest from the SDK's chain. */
export function awsClientOptions(region?: string): { region?: string } {
  const found = regionFrom(region);
  return found ? { region: found } : {};
}

const REGION_HINT = 'Give --region REGION, set AWS_REGION (or AWS_DEFAULT_REGION), or set a region in your AWS profile (aws configure).';

/**
 * What went wrong with an AWS call, for the operator: the error's name and first line of its
 * message (AWS and SDK messages name the problem, never a secret value), and a hint for the
 * two everyone meets first: no region, no credentials.
 */
export function awsErrorMessage(error: unknown): string {
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? (error.message.split('\n')[0] ?? '').slice(0, 300) : '';
  const plain = message && message !== name ? `${name}: ${message}` : name;
  const said = /[.?!]$/.test(plain) ? plain : `${plain}.`;
  if (/region is missing/i.test(message)) return `${said} ${REGION_HINT}`;
  if (name === 'CredentialsProviderError' || /credential/i.test(message))
    return `${said} Are your AWS credentials set (aws configure, AWS_PROFILE, or aws sso login)?`;
  return said;
}

export async function stackOutputs(stackName: string, region?: string): Promise<Record<string, string>> {
  const client = new CloudFormationClient(awsClientOptions(region));
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const outputs = Stacks?.[0]?.Outputs ?? [];
    return Object.fromEntries(outputs.flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])));
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'ValidationError')
      throw new UsageError(`No stack named ${stackName} in this account and region (${await client.config.region()}).`);
    throw new UsageError(`Could not read the stack ${stackName}: ${awsErrorMessage(error)}`);
  } finally {
    client.destroy();
  }
}

export async function readSecretString(secretId: string, region?: string): Promise<string> {
  const client = new SecretsManagerClient(awsClientOptions(region));
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    if (SecretString === undefined) throw new UsageError(`The secret ${secretId} holds no text.`);
    return SecretString;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`Could not read the secret ${secretId}: ${awsErrorMessage(error)}`);
  } finally {
    client.destroy();
  }
}
