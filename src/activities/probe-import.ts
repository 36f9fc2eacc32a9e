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
  if (/runtime[_ ]?env/i.test(jobMessage) && /fail|error/i.test(jobMessage))
    return jobMessage.trim().split('\n')[0];
  return undefined;
}
