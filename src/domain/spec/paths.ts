/**
 * Where things live on storage, in one place. Pure strings with `/` (workflows use them too, and
 * may not import node:path); repeated slashes collapse, as path.join would for absolute paths.
 */
const joinPath = (...parts: (string | number)[]): string => parts.join('/').replace(/\/{2,}/g, '/');

/** `<root>/<name>/<workflow id>`: a run's (campaign's, sweep's) own folder under a storage root. */
export function runFolder(root: string, name: string, workflowId: string): string {
  return joinPath(root, name, workflowId);
}

/** `<checkpointDir>/<name>/<workflow id>`: trainer.default_local_dir of a run (or a whole campaign). */
export function runCheckpointDir(
  storage: { checkpointDir: string },
  name: string,
  workflowId: string,
): string {
  return runFolder(storage.checkpointDir, name, workflowId);
}

/** `<archiveDir>/<name>/<workflow id>`: manifests and results of a run, campaign or sweep. */
export function runArchiveDir(storage: { archiveDir: string }, name: string, workflowId: string): string {
  return runFolder(storage.archiveDir, name, workflowId);
}

/** verl's folder for the checkpoint of `step`. */
export function checkpointPath(checkpointDir: string, step: number): string {
  return joinPath(checkpointDir, `global_step_${step}`);
}

/** verl's metrics file (VERL_FILE_LOGGER_PATH) in the checkpoint dir. */
export function metricsPath(checkpointDir: string): string {
  return joinPath(checkpointDir, 'metrics.jsonl');
}

/** An experiment's manifest: `<archiveDir>/<name>/<workflow id>/manifest.json`. */
export function manifestPath(archiveDir: string, name: string, workflowId: string): string {
  return joinPath(runFolder(archiveDir, name, workflowId), 'manifest.json');
}

/** A shipped tree's record (src/domain/code/code.ts ShippedCode) next to the manifest: written once per run. */
export function shippedCodePath(runDir: string): string {
  return joinPath(runDir, 'code.json');
}

/** `git diff HEAD` of a dirty shipped tree, next to the manifest. */
export const CODE_DIFF_FILE = 'code.diff';

/**
 * Shipped archives, one per content (`_ray_pkg_<sha1>.zip`), shared by the runs under a storage
 * root: a sweep's children that ship the same tree keep one copy. `_` never starts a run's name.
 */
export function codePackageStorePath(archiveDir: string, packageName: string): string {
  return joinPath(archiveDir, '_code-packages', packageName);
}

/** The validation results next to the manifest. */
export function validationResultsPath(runDir: string): string {
  return joinPath(runDir, 'validation.json');
}

/** The all-reduce check's results, one file per cluster attempt. */
export function allReduceResultsPath(runDir: string, clusterName: string): string {
  return joinPath(runDir, `allreduce-${clusterName}.json`);
}

/** The environment probe's results, one file per cluster attempt. */
export function environmentResultsPath(runDir: string, clusterName: string): string {
  return joinPath(runDir, `environment-${clusterName}.json`);
}

/** A campaign's manifest: `<archiveDir>/<name>/<campaign id>/campaign.json`. */
export function campaignManifestPath(archiveDir: string, name: string, campaignId: string): string {
  return joinPath(runFolder(archiveDir, name, campaignId), 'campaign.json');
}

/** A campaign's checkpoint ledger (hashes fixed when first seen), next to its manifest. */
export function ledgerPath(archiveDir: string, name: string, campaignId: string): string {
  return joinPath(runFolder(archiveDir, name, campaignId), 'checkpoints.json');
}

/** A sweep's manifest and table: `<archiveDir>/<sweep>/<sweep id>/sweep.json` and `sweep.csv`. */
export function sweepManifestPaths(
  archiveDir: string,
  sweepName: string,
  sweepId: string,
): { manifestPath: string; csvPath: string } {
  const dir = runFolder(archiveDir, sweepName, sweepId);
  return { manifestPath: joinPath(dir, 'sweep.json'), csvPath: joinPath(dir, 'sweep.csv') };
}

/** The compact per-step metrics series (src/domain/train/metrics-series.ts) next to a run's manifest. */
export function metricsSeriesPath(runDir: string): string {
  return joinPath(runDir, 'metrics-series.json');
}

/** The training job's driver log, copied while it is read: `<runDir>/train-<cluster>.log` (one per cluster). */
export function trainLogPath(runDir: string, clusterName: string, copy = 0): string {
  return joinPath(runDir, `train-${clusterName}${copy > 0 ? `.${copy}` : ''}.log`);
}

/** What the train activity parsed of that log so far (a retry continues from it). */
export function trainLogStatePath(logPath: string): string {
  return `${logPath.replace(/\.log$/, '')}.state.json`;
}

/** The per-key metrics summary (last and best, src/domain/train/metrics-series.ts) next to the series. */
export function metricsSummaryPath(runDir: string): string {
  return joinPath(runDir, 'metrics-summary.json');
}
