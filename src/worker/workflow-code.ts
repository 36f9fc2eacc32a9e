import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config/config.js';

/** Path of the workflow bundle's entry, next to this file (.ts under tsx, .js once built). */
export const workflowsPath = fileURLToPath(
  new URL(`../workflows/index${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
);

/**
 * Workflow interceptor modules, in every bundle (the prebuilt one and one made at start): the run
 * counter (run-metrics-interceptor.ts) that feeds the worker's /metrics through the SDK's exporter.
 */
export const workflowInterceptorModules = [
  fileURLToPath(
    new URL(
      `../workflows/run-metrics-interceptor${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
      import.meta.url,
    ),
  ),
];

/** The bundle `npm run build` writes beside the compiled worker: dist/worker/workflow-bundle.js. */
export const prebuiltBundlePath = fileURLToPath(new URL('./workflow-bundle.js', import.meta.url));

/**
 * Where the worker gets its workflow code: the prebuilt bundle when there is one (the built
 * worker, the image), else the sources, bundled at start (the dev path under tsx, where
 * src/worker/workflow-bundle.js never exists). RAGEN_WORKFLOW_BUNDLE names another bundle, or `off`.
 */
export function workflowSource(
  setting: string | undefined,
): { workflowBundle: { codePath: string } } | { workflowsPath: string } {
  if (setting === 'off') return { workflowsPath };
  if (setting) {
    if (!existsSync(setting)) {
      throw new ConfigError(
        `RAGEN_WORKFLOW_BUNDLE: no bundle at ${setting}; run 'npm run build', or unset it to bundle on start`,
      );
    }
    return { workflowBundle: { codePath: setting } };
  }
  return existsSync(prebuiltBundlePath)
    ? { workflowBundle: { codePath: prebuiltBundlePath } }
    : { workflowsPath };
}
