/**
 * Reading the `key=value` overrides of an argv as Hydra would, for the few scalar keys the
 * product's load-time rules need. Not a Hydra parser: lists, dicts and interpolations stay text.
 */

export type HydraScalar = string | number | boolean | null;

/** The Hydra key of a `key=value` argument (`+`/`++` dropped); undefined for options and positionals. */
export function overrideKey(arg: string): string | undefined {
  const at = arg.indexOf('=');
  if (at <= 0 || arg.startsWith('-')) return undefined;
  return arg.slice(0, at).replace(/^\+{1,2}/, '');
}

/** A Hydra override value: null, booleans, numbers, a quoted string, else the text itself. */
export function overrideValue(text: string): HydraScalar {
  const t = text.trim();
  if (/^null$/i.test(t)) return null;
  if (/^true$/i.test(t)) return true;
  if (/^false$/i.test(t)) return false;
  if (/^[+-]?\d+$/.test(t)) return Number(t);
  if (/^[+-]?(\d+\.\d*|\.\d+|\d+)(e[+-]?\d+)?$/i.test(t)) return Number(t);
  const quoted = /^'(.*)'$/s.exec(t) ?? /^"(.*)"$/s.exec(t);
  return quoted ? (quoted[1] ?? '') : t;
}

/** Key → value text of every override in an argv; a later override of a key wins, as in Hydra. */
export function overridesOf(argv: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const arg of argv) {
    const key = overrideKey(arg);
    if (key !== undefined) out.set(key, arg.slice(arg.indexOf('=') + 1));
  }
  return out;
}

/**
 * Hydra reads an unquoted `,` outside brackets as a sweep (`a=1,2`) and refuses it in a single
 * run: "Ambiguous value for argument". Quoting the value (`'0,1'`) makes it one string.
 */
export function isAmbiguousValue(text: string): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '[' || ch === '{' || ch === '(') depth++;
    else if (ch === ']' || ch === '}' || ch === ')') depth--;
    else if (ch === ',' && depth === 0) return true;
  }
  return false;
}
