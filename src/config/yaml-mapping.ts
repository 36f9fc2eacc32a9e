import { parseDocument } from 'yaml';
import { SpecError } from '../domain/spec/spec-error.js';

/** Parse YAML text into a plain mapping; throws SpecError on malformed YAML or a non-mapping. */
export function parseYamlMapping(text: string, source = 'spec', kind?: string): Record<string, unknown> {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new SpecError(
      source,
      doc.errors.map((e) => ({
        field: '(yaml)',
        message: `malformed YAML: ${e.message.split('\n')[0]} — fix the syntax at line ${e.linePos?.[0]?.line ?? '?'}`,
      })),
      kind,
    );
  }
  const raw: unknown = doc.toJS();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new SpecError(
      source,
      [
        {
          field: '(root)',
          message: 'the spec must be a YAML mapping with name, rayVersion, cluster, trainer and storage',
        },
      ],
      kind,
    );
  }
  return raw as Record<string, unknown>;
}
