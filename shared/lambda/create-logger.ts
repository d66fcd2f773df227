import { Logger } from '@aws-lambda-powertools/logger';
import { ConfigError } from '../errors.ts';
import type { Env } from '../settings/setting.ts';

const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'CRITICAL'] as const;

/** A Powertools logger whose service and level come from the handler's environment, not import time. */
export function createLogger(defaultService: string, env: Env): Logger {
  const raw = env.POWERTOOLS_LOG_LEVEL;
  const level = raw === undefined ? 'INFO' : LOG_LEVELS.find((known) => known === raw.toUpperCase());
  if (level === undefined) {
    throw new ConfigError(`POWERTOOLS_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  }
  return new Logger({ serviceName: env.POWERTOOLS_SERVICE_NAME ?? defaultService, logLevel: level });
}
