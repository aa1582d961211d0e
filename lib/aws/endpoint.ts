import type { BinaryDecisionDiagram } from '@smithy/core/endpoints';
import { ReasonedError } from '../shared/errors.js';

/** An AWS service as its endpoint and configuration name it. */
export interface AwsService {
  /** The signing name, unless the endpoint rules name another. */
  signingName: string;
  /** The suffix of its service-specific endpoint variable, `AWS_ENDPOINT_URL_<id>`. */
  endpointId: string;
  /**
   * The SDK client's own endpoint rules (its compiled `endpoint/bdd.js`), so every host is the
   * one its client would use; imported only for what the common case below does not cover.
   */
  endpointRules: () => Promise<BinaryDecisionDiagram>;
}

export class RegionMissingError extends ReasonedError<'region_missing'> {
  constructor() {
    super('No AWS region: set AWS_REGION (Lambda always does) or a region in the AWS profile.', 'region_missing');
  }
}

/**
 * The endpoint settings cannot be honoured: the SDK's endpoint rules refuse them (FIPS or
 * dual-stack where the partition has neither, FIPS or dual-stack with a configured endpoint),
 * a flag is neither `true` nor `false`, or the region or configured endpoint is malformed.
 * Raised before anything is sent, never answered with another endpoint.
 */
export class EndpointSettingsError extends ReasonedError<
  'endpoint_unsupported' | 'endpoint_setting_invalid' | 'region_invalid' | 'endpoint_url_invalid'
> {}

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

/** The SDK's FIPS and dual-stack endpoint settings. */
export interface EndpointSettings {
  useFipsEndpoint: boolean;
  useDualstackEndpoint: boolean;
}

export type EndpointSettingsSource = () => Promise<EndpointSettings>;

/** One key of the shared config profile, as written there; undefined when the profile does not set it. */
export type ProfileSetting = (key: string) => Promise<string | undefined>;

/**
 * FIPS and dual-stack as the SDK clients read them: `AWS_USE_FIPS_ENDPOINT` and
 * `AWS_USE_DUALSTACK_ENDPOINT`, else `use_fips_endpoint` and `use_dualstack_endpoint` in the
 * shared config profile, else off. Where the SDK would quietly skip a value that is neither
 * `true` nor `false`, this refuses it: a FIPS setting must never quietly become non-FIPS.
 * Lambda has no profile, so there it is not looked for unless a config file is named.
 */
export function endpointSettings(
  env: Record<string, string | undefined>,
  profile: ProfileSetting = sdkProfileSetting(env),
): EndpointSettingsSource {
  const profileMayExist = !env['AWS_LAMBDA_FUNCTION_NAME'] || Boolean(env['AWS_CONFIG_FILE'] || env['AWS_SHARED_CREDENTIALS_FILE']);
  const flag = async (fromEnvironment: string | undefined, variable: string, profileKey: string): Promise<boolean> => {
    if (fromEnvironment) return parseFlag(fromEnvironment, variable);
    const fromProfile = profileMayExist ? await profile(profileKey) : undefined;
    return fromProfile ? parseFlag(fromProfile, `${profileKey} in the AWS profile`) : false;
  };
  let settings: Promise<EndpointSettings> | undefined;
  return () =>
    (settings ??= Promise.all([
      flag(env['AWS_USE_FIPS_ENDPOINT'], 'AWS_USE_FIPS_ENDPOINT', 'use_fips_endpoint'),
      flag(env['AWS_USE_DUALSTACK_ENDPOINT'], 'AWS_USE_DUALSTACK_ENDPOINT', 'use_dualstack_endpoint'),
    ]).then(([useFipsEndpoint, useDualstackEndpoint]) => ({ useFipsEndpoint, useDualstackEndpoint })));
}

function parseFlag(value: string, where: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new EndpointSettingsError(`${where} must be "true" or "false", as the AWS SDK reads it.`, 'endpoint_setting_invalid');
}

/** The SDK's profile lookup, for the profile and files the given environment names. */
function sdkProfileSetting(env: Record<string, string | undefined>): ProfileSetting {
  const profile = env['AWS_PROFILE'];
  const configFilepath = env['AWS_CONFIG_FILE'];
  const filepath = env['AWS_SHARED_CREDENTIALS_FILE'];
  const files = { ...(profile ? { profile } : {}), ...(configFilepath ? { configFilepath } : {}), ...(filepath ? { filepath } : {}) };
  return async (key) => {
    const { loadConfig } = await import('@smithy/core/config');
    return loadConfig<string | undefined>(
      { environmentVariableSelector: () => undefined, configFileSelector: (section) => section[key], default: undefined },
      files,
    )();
  };
}

/** Where one service is reached and what its requests are signed for. */
export interface ServiceEndpoint {
  url: URL;
  signingRegion: string;
  signingName: string;
}

/**
 * The endpoint the SDK client of `service` would use: `AWS_ENDPOINT_URL_<SERVICE>`, then
 * `AWS_ENDPOINT_URL` (unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is true), else the host its
 * endpoint rules give for the region, FIPS and dual-stack, in any partition the SDK knows
 * (and, for a region it does not, the one its rules pick). A region named `fips-…` or
 * `…-fips` means FIPS in that region, as in the SDK. What the rules refuse is an EndpointSettingsError.
 */
export async function serviceEndpoint(
  service: AwsService,
  region: string,
  settings: EndpointSettings,
  env: Record<string, string | undefined>,
): Promise<ServiceEndpoint> {
  const ignoreConfigured = env['AWS_IGNORE_CONFIGURED_ENDPOINT_URLS']?.toLowerCase() === 'true';
  const configured = ignoreConfigured ? undefined : env[`AWS_ENDPOINT_URL_${service.endpointId}`] || env['AWS_ENDPOINT_URL'];
  if (configured && !URL.canParse(configured)) {
    throw new EndpointSettingsError(`AWS_ENDPOINT_URL_${service.endpointId} or AWS_ENDPOINT_URL is not a URL.`, 'endpoint_url_invalid');
  }
  return commonEndpoint(service, region, settings, configured) ?? sdkEndpoint(service, region, settings, configured);
}

// The regions of the aws and aws-cn partitions as the SDK's partition data matches them.
const AWS_REGION = /^(us|eu|ap|sa|ca|me|af|il|mx)-\w+-\d+$/;
const AWS_CN_REGION = /^cn-\w+-\d+$/;

/**
 * What the endpoint rules give in the common case, without loading them: FIPS and dual-stack
 * off, and a configured endpoint, or a region of the aws or aws-cn partition (the comparison
 * test holds this to the SDK clients' own answers). Undefined for everything else.
 */
function commonEndpoint(
  service: AwsService,
  region: string,
  settings: EndpointSettings,
  configured: string | undefined,
): ServiceEndpoint | undefined {
  if (settings.useFipsEndpoint || settings.useDualstackEndpoint) return undefined;
  const host = AWS_REGION.test(region) ? 'amazonaws.com' : AWS_CN_REGION.test(region) ? 'amazonaws.com.cn' : undefined;
  if (host === undefined) return undefined;
  const url = new URL(configured ?? `https://${service.signingName}.${region}.${host}`);
  return { url, signingRegion: region, signingName: service.signingName };
}

/** The SDK's own region resolution and endpoint rules, imported on first use. */
async function sdkEndpoint(
  service: AwsService,
  region: string,
  settings: EndpointSettings,
  configured: string | undefined,
): Promise<ServiceEndpoint> {
  const [{ awsEndpointFunctions }, { resolveRegionConfig }, { customEndpointFunctions, decideEndpoint }, rules] = await Promise.all([
    import('@aws-sdk/core/client'),
    import('@smithy/core/config'),
    import('@smithy/core/endpoints'),
    service.endpointRules(),
  ]);
  // The SDK's `aws.partition` (its partition data) and `aws.parseArn`, as every SDK client's endpoint resolver registers them.
  customEndpointFunctions['aws'] ??= awsEndpointFunctions;
  // The SDK's own region resolution: `us-east-1-fips` is us-east-1 with FIPS, and a region must be a host label.
  const resolved = resolveRegionConfig({ region, useFipsEndpoint: settings.useFipsEndpoint });
  let realRegion: string;
  try {
    realRegion = await resolved.region();
  } catch {
    throw new EndpointSettingsError('The AWS region is not a valid host name label.', 'region_invalid');
  }
  const endpointParams = {
    Region: realRegion,
    UseFIPS: await resolved.useFipsEndpoint(),
    UseDualStack: settings.useDualstackEndpoint,
    ...(configured ? { Endpoint: configured } : {}),
  };
  let decided: ReturnType<typeof decideEndpoint>;
  try {
    decided = decideEndpoint(rules, { endpointParams });
  } catch (error) {
    // The rules' own words, e.g. "FIPS and DualStack are enabled, but this partition does not support one or both".
    const why = error instanceof Error && error.name === 'EndpointError' ? `: ${error.message}` : '';
    throw new EndpointSettingsError(
      `No ${service.signingName} endpoint for region ${realRegion} with FIPS ${onOff(endpointParams.UseFIPS)}, dual-stack ${onOff(endpointParams.UseDualStack)}${configured ? ' and a configured endpoint URL' : ''}${why}`,
      'endpoint_unsupported',
    );
  }
  const authScheme = (decided.properties?.['authSchemes'] as Array<{ signingRegion?: string; signingName?: string }> | undefined)?.[0];
  return {
    url: new URL(decided.url.href),
    signingRegion: authScheme?.signingRegion ?? realRegion,
    signingName: authScheme?.signingName ?? service.signingName,
  };
}

const onOff = (value: boolean) => (value ? 'on' : 'off');

export type EndpointSource = () => Promise<ServiceEndpoint>;

/**
 * The endpoint of `service`, resolved on first use and kept, failure included: the settings
 * it follows do not change in a container.
 */
export function awsEndpoint(
  service: AwsService,
  env: Record<string, string | undefined>,
  region: RegionSource,
  settings: EndpointSettingsSource,
): EndpointSource {
  let endpoint: Promise<ServiceEndpoint> | undefined;
  return () =>
    (endpoint ??= Promise.all([region(), settings()]).then(([resolvedRegion, resolvedSettings]) =>
      serviceEndpoint(service, resolvedRegion, resolvedSettings, env),
    ));
}
