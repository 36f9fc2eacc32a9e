import { loadClientConnectConfig } from '@temporalio/envconfig';

/** What both the CLI's client and the worker connect with. */
export interface TemporalConnectionSettings {
  address: string;
  namespace: string;
  /** Address, TLS, API key and gRPC metadata: valid for both Connection and NativeConnection. */
  connectionOptions: ReturnType<typeof loadClientConnectConfig>['connectionOptions'] & { address: string };
  /** The profile named by TEMPORAL_PROFILE, if any (for messages; never the API key). */
  profile?: string;
}

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';

/** Bad connection settings (a profile that does not exist, a malformed config file). */
export class TemporalSettingsError extends Error {
  override name = 'TemporalSettingsError';
}

/**
 * Connection settings read exactly as the `temporal` CLI reads them: the profile file
 * (TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml), profile TEMPORAL_PROFILE
 * (default `default`), then the environment on top: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_GRPC_META_*. An API key turns TLS on.
 */
export function temporalConnectionSettings(env: NodeJS.ProcessEnv = process.env): TemporalConnectionSettings {
  const vars = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  let loaded: ReturnType<typeof loadClientConnectConfig>;
  try {
    loaded = loadClientConnectConfig({ overrideEnvVars: vars });
  } catch (err) {
    const file = vars['TEMPORAL_CONFIG_FILE'] ?? '~/.config/temporalio/temporal.toml';
    throw new TemporalSettingsError(
      `Temporal connection settings: ${(err as Error).message} (profile file ${file}, profile ${vars['TEMPORAL_PROFILE'] ?? 'default'}); fix the file or TEMPORAL_PROFILE`,
    );
  }
  const address = loaded.connectionOptions.address ?? DEFAULT_TEMPORAL_ADDRESS;
  const namespace = loaded.namespace ?? 'default';
  return {
    address,
    namespace,
    connectionOptions: { ...loaded.connectionOptions, address },
    profile: vars['TEMPORAL_PROFILE'],
  };
}
