import { Logger } from '@aws-lambda-powertools/logger';
import type { Env } from '../config/require-setting';

const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'CRITICAL'] as const;

/** A Powertools logger whose service and level come from the handler's environment, not import time. */
export function createLogger(defaultService: string, env: Env): Logger {
  const level = env.POWERTOOLS_LOG_LEVEL?.toUpperCase();
  return new Logger({
    serviceName: env.POWERTOOLS_SERVICE_NAME ?? defaultService,
    logLevel: LOG_LEVELS.find((known) => known === level) ?? 'INFO',
  });
}
