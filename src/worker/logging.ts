import { Context } from '@temporalio/activity';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
import type { BackendLogger } from '../backends/logger.js';

/** The SDK stamps each workflow log call with the time it was made (nanoseconds, bigint). */
const LOG_TIMESTAMP = Symbol.for('log_timestamp');

const PINO_LEVEL = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/** JSON lines: `{"level":"info","time":"…","msg":"…",…fields}`, one per log call. */
export function jsonLogger(level: LogLevel = 'INFO', destination?: DestinationStream): PinoLogger {
  const options = {
    level: PINO_LEVEL[level],
    base: undefined,
    timestamp: false, // the time comes with each call (below), so workflow lines keep theirs
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The SDK's Logger backed by pino, for `Runtime.install({ logger })`. The SDK attaches its context
 * to every call: workflowId, runId, workflowType on workflow lines (`log` from the workflow API);
 * workflowId, activityType and attempt on activity lines (the activity Context logger). Workflows
 * add stage and attempt themselves. Everything becomes a JSON field.
 */
export class JsonSdkLogger implements Logger {
  constructor(readonly pino: PinoLogger) {}

  log(level: LogLevel, message: string, meta: LogMetadata = {}): void {
    const { [LOG_TIMESTAMP]: stamp, ...fields } = meta;
    const time = typeof stamp === 'bigint' ? new Date(Number(stamp / 1_000_000n)) : new Date();
    this.pino[PINO_LEVEL[level]]({ time: time.toISOString(), ...fields }, message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/**
 * A backend's logger (src/backends/logger.ts) that writes through the current activity's Context
 * logger, so its lines carry the workflow id, activity type and attempt; outside an activity,
 * through the Runtime's logger.
 */
export const activityContextLogger: BackendLogger = {
  info: (message, fields) => contextLogger().info(message, { component: 'backend', ...fields }),
  warn: (message, fields) => contextLogger().warn(message, { component: 'backend', ...fields }),
};

function contextLogger(): Logger {
  try {
    return Context.current().log;
  } catch {
    return Runtime.instance().logger;
  }
}
