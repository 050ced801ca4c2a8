/** Providers with a preset: each only fills defaults (endpoint template, region, path style); set fields win. */
export const S3_PRESETS = ['aws', 'r2', 'b2', 'wasabi', 'minio', 'hetzner', 'custom'] as const;

/** One of {@link S3_PRESETS}. */
export type S3Preset = (typeof S3_PRESETS)[number];

interface PresetDefaults {
  /** Endpoint template; `{region}` and `{accountId}` are filled in. Undefined = the AWS SDK's own endpoint. */
  endpoint?: string;
  region?: string;
  forcePathStyle: boolean;
}

// Endpoints as each provider documents them for its S3 API.
const DEFAULTS: Record<S3Preset, PresetDefaults> = {
  aws: { region: 'us-east-1', forcePathStyle: false },
  r2: { endpoint: 'https://{accountId}.r2.cloudflarestorage.com', region: 'auto', forcePathStyle: true },
  b2: { endpoint: 'https://s3.{region}.backblazeb2.com', forcePathStyle: false },
  wasabi: { endpoint: 'https://s3.{region}.wasabisys.com', region: 'us-east-1', forcePathStyle: false },
  // MinIO and unknown S3-compatible servers: path style works without wildcard DNS for the bucket names.
  minio: { region: 'us-east-1', forcePathStyle: true },
  hetzner: { endpoint: 'https://{region}.your-objectstorage.com', region: 'fsn1', forcePathStyle: false },
  custom: { region: 'us-east-1', forcePathStyle: true },
};

/** The fields of a config that decide where requests go. */
export interface EndpointFields {
  preset: S3Preset;
  endpoint?: string;
  region?: string;
  accountId?: string;
  forcePathStyle?: boolean;
}

/** Where a config sends its requests, after applying the preset's defaults. */
export interface ResolvedEndpoint {
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
}

/**
 * Applies a preset: explicit fields win, the preset fills the rest. Returns a list of problems instead of throwing, so
 * the config schema can report them as field errors at save time (never at first use).
 */
export function resolveEndpoint(fields: EndpointFields): ResolvedEndpoint | { problems: Array<{ path: string; message: string }> } {
  const defaults = DEFAULTS[fields.preset];
  const region = fields.region ?? defaults.region;
  const problems: Array<{ path: string; message: string }> = [];
  let endpoint = fields.endpoint;
  if (endpoint === undefined && defaults.endpoint) {
    if (defaults.endpoint.includes('{accountId}') && !fields.accountId) {
      problems.push({ path: 'accountId', message: `preset ${fields.preset} needs accountId (or an explicit endpoint)` });
    }
    if (defaults.endpoint.includes('{region}') && !region) {
      problems.push({ path: 'region', message: `preset ${fields.preset} needs region (for example us-west-004)` });
    }
    endpoint = defaults.endpoint.replace('{accountId}', fields.accountId ?? '').replace('{region}', region ?? '');
  }
  if (endpoint === undefined && (fields.preset === 'minio' || fields.preset === 'custom')) {
    problems.push({ path: 'endpoint', message: `preset ${fields.preset} needs endpoint (for example http://minio.lan:9000)` });
  }
  if (!region) problems.push({ path: 'region', message: 'region is required' });
  if (problems.length > 0) return { problems };
  return { endpoint, region: region as string, forcePathStyle: fields.forcePathStyle ?? defaults.forcePathStyle };
}
