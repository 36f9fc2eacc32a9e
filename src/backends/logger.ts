/**
 * What backends log through: escalations (SIGKILL after SIGTERM, a 409 read back, a retry).
 * A plain interface so nothing under src/backends depends on Temporal; the worker passes one that
 * writes through the SDK's logger with the activity's context (workflow id, attempt).
 */
export interface BackendLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** For tools and tests that do not care. */
export const quietLogger: BackendLogger = { info() {}, warn() {} };
