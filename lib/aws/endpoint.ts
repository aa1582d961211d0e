import { ReasonedError } from '../shared/errors.js';

/** An AWS service as its endpoint and configuration name it. */
export interface AwsService {
  /** The signing name and the first label of the endpoint host. */
  signingName: string;
  /** The suffix of its service-specific endpoint variable, `AWS_ENDPOINT_URL_<id>`. */
  endpointId: string;
}

export class RegionMissingError extends ReasonedError<'region_missing'> {
  constructor() {
    super('No AWS region: set AWS_REGION (Lambda always does) or a region in the AWS profile.', 'region_missing');
  }
}

export type RegionSource = () => Promise<string>;

/**
 * The region Lambda sets; outside Lambda, the SDK's own lookup (environment, then the
 * profile's config file), imported on first use.
 */
export function awsRegion(env: Record<string, string | undefined>, fallback: () => Promise<string | undefined> = sdkRegion): RegionSource {
  const fromEnvironment = env['AWS_REGION'] || env['AWS_DEFAULT_REGION'];
  if (fromEnvironment) return async () => fromEnvironment;
  let found: Promise<string | undefined> | undefined;
  return async () => {
    found ??= fallback().catch(() => undefined);
    const region = await found;
    if (!region) throw new RegionMissingError();
    return region;
  };
}

async function sdkRegion(): Promise<string | undefined> {
  const { loadConfig, NODE_REGION_CONFIG_OPTIONS, NODE_REGION_CONFIG_FILE_OPTIONS } = await import('@smithy/core/config');
  return loadConfig(NODE_REGION_CONFIG_OPTIONS, NODE_REGION_CONFIG_FILE_OPTIONS)();
}

/**
 * Where a service is reached: `AWS_ENDPOINT_URL_<SERVICE>`, then `AWS_ENDPOINT_URL` (as the
 * SDK reads them, unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is true), else the regional endpoint.
 */
export function serviceEndpoint(service: AwsService, region: string, env: Record<string, string | undefined>): URL {
  const ignoreConfigured = env['AWS_IGNORE_CONFIGURED_ENDPOINT_URLS']?.toLowerCase() === 'true';
  const configured = ignoreConfigured ? undefined : env[`AWS_ENDPOINT_URL_${service.endpointId}`] || env['AWS_ENDPOINT_URL'];
  if (configured) return new URL(configured);
  const domain = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  return new URL(`https://${service.signingName}.${region}.${domain}/`);
}
