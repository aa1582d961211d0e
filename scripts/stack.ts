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

export async function stackOutputs(stackName: string, region?: string): Promise<Record<string, string>> {
  const client = new CloudFormationClient(region ? { region } : {});
  try {
    const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const outputs = Stacks?.[0]?.Outputs ?? [];
    return Object.fromEntries(outputs.flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])));
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'ValidationError') throw new UsageError(`No stack named ${stackName} in this account and region (${await client.config.region()}).`);
    throw new UsageError(`Could not read the stack ${stackName}: ${name}. Are your AWS credentials and region set?`);
  } finally {
    client.destroy();
  }
}

export async function readSecretString(secretId: string, region?: string): Promise<string> {
  const client = new SecretsManagerClient(region ? { region } : {});
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    if (SecretString === undefined) throw new UsageError(`The secret ${secretId} holds no text.`);
    return SecretString;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`Could not read the secret ${secretId}: ${(error as Error).name}.`);
  } finally {
    client.destroy();
  }
}
