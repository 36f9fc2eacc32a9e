import { writeFile } from 'node:fs/promises';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { prebuiltBundlePath, workflowInterceptorModules, workflowsPath } from './workflow-code.js';

/**
 * `npm run build`, after tsc: bundle the compiled workflows once into dist/worker/workflow-bundle.js, so
 * a worker started from dist (or the image) loads it instead of bundling on every start.
 */
const { code } = await bundleWorkflowCode({
  workflowsPath,
  workflowInterceptorModules,
  logger: new DefaultLogger('WARN'),
});
await writeFile(prebuiltBundlePath, code);
console.log(
  `workflow bundle: ${prebuiltBundlePath} (${(code.length / 1e6).toFixed(1)} MB) from ${workflowsPath}`,
);
