/**
 * Client settings for an AWS emulator (moto, LocalStack). Kept apart from the product's client settings:
 * only emulator clients get these dummy credentials, so the local runtime never needs (or picks up) real
 * ones from the developer's profile.
 */
import type { AwsClientConfig } from '../../../../shared/index.ts';

/** Region every emulator resource lives in. */
export const EMULATOR_REGION = 'us-east-1';

/** Dummy credentials emulators accept; never real ones. */
export const EMULATOR_CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' } as const;

/** Settings for an SDK client that talks to the emulator at `endpoint`. */
export interface EmulatorClientConfig extends AwsClientConfig {
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** Client settings with an explicit endpoint, region and dummy credentials for the emulator at `endpoint`. */
export function emulatorClientConfig(endpoint: string): EmulatorClientConfig {
  return { endpoint, region: EMULATOR_REGION, credentials: { ...EMULATOR_CREDENTIALS } };
}
