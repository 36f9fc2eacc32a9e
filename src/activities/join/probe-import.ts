/**
 * Whether a probe job failed because its code could not be loaded on the cluster: the image lacks a
 * module the probe imports (Python prints `ModuleNotFoundError`/`ImportError` before the probe
 * runs), or Ray could not set up the job's runtime_env (the py_modules package). No fresh cluster
 * of the same image can fix either, so the caller fails once instead of resubmitting.
 * Returns the line that says so, or undefined when the failure is something else.
 */
export function probeImportFailure(logs: string, jobMessage: string): string | undefined {
  const line = logs.split('\n').find((l) => /\b(ModuleNotFoundError|ImportError)\b/.test(l));
  if (line) return line.trim();
  // Ray's own words only: its message goes on with the job's last logs, where a raylet of a dying
  // node prints "Runtime Env Agent network error" (a lost node, which a new cluster does fix).
  const own = jobMessage.split(/last available logs/i)[0] ?? '';
  if (/runtime[_ ]?env/i.test(own) && /fail|error/i.test(own)) return own.trim().split('\n')[0];
  return undefined;
}
