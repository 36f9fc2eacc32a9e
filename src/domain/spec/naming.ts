/** Pure naming helpers shared by workflows and activities (deterministic, no I/O). */

/** FNV-1a, 32 bit, as 8 hex characters: short stable suffixes for names derived from ids. */
export function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** DNS-1123 label, at most 63 characters: `<name>-<hash of workflow id>-a<attempt>`. */
export function clusterName(experimentName: string, workflowId: string, attempt: number): string {
  const suffix = `-${shortHash(workflowId)}-a${attempt}`;
  const base = experimentName
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 63 - suffix.length)
    .replace(/-+$/, '');
  return `${base || 'rx'}${suffix}`;
}

/** Ray Jobs submission id: a retried submit of the same stage reuses it, so no second job starts. */
export function submissionId(
  clusterName: string,
  stage: 'checks' | 'storage' | 'train' | 'validate',
  attempt = 0,
): string {
  return `${clusterName}-${stage}-${attempt}`;
}
