import type { z } from 'zod';

/**
 * `text` read as JSON and checked against `schema`; or why not, in words naming the failing fields
 * (`is not JSON (…)`, `is not <what> (path: message; …)`), for a message about a file on disk.
 */
export function parseJsonText<T>(
  text: string,
  schema: z.ZodType<T>,
  what: string,
): { ok: true; data: T } | { ok: false; why: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, why: `is not JSON (${(err as Error).message})` };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, data: parsed.data };
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  return { ok: false, why: `is not ${what} (${issues.join('; ')})` };
}
