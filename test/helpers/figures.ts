/**
 * docs/figures.yaml's quotes rendered from their results files. A quote is the doc's text with
 * each number a placeholder `{expression}` or `{expression|format}`:
 * - expression: paths into the results file (`numbers.rows[0].events`,
 *   `numbers.medians['total wall (s)'].rayjob`, `numbers.starts[*].startMs` for every element,
 *   `numbers.all[1:]` for all but the first),
 *   numbers, + - * / and parentheses, min, max, median, sum, count over a list, and
 *   countOf(list, value): how many elements equal the value;
 * - format: `.N` (N decimals), `,` (thousands grouped, no decimals), `,.N`, `short` (a commit's
 *   first 7 characters), `day` (an ISO date's day); none for an integer or a string.
 */

type Value = unknown;

export class FigureError extends Error {}

const listFunctions: Record<string, (xs: number[]) => number> = {
  min: (xs) => Math.min(...xs),
  max: (xs) => Math.max(...xs),
  sum: (xs) => xs.reduce((a, b) => a + b, 0),
  count: (xs) => xs.length,
  median: (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  },
};

// One token: a number, an identifier, a quoted key, or punctuation.
const tokenPattern = /\s*(?:(\d+(?:\.\d+)?(?:e\d+)?)|([A-Za-z_$][\w$]*)|'([^']*)'|(\[\*\]|[-+*/()[\].,:]))/y;

function tokenize(expression: string): string[] {
  const tokens: string[] = [];
  tokenPattern.lastIndex = 0;
  while (tokenPattern.lastIndex < expression.length) {
    if (/^\s*$/.test(expression.slice(tokenPattern.lastIndex))) break;
    const start = tokenPattern.lastIndex;
    const m = tokenPattern.exec(expression);
    if (!m) throw new FigureError(`cannot read "${expression}" at "${expression.slice(start)}"`);
    // Quoted keys keep a marker so that a key never reads as an identifier or a number.
    tokens.push(m[1] ?? m[2] ?? (m[3] !== undefined ? `'${m[3]}` : m[4]!));
  }
  return tokens;
}

/** Evaluates an expression against a results file's JSON. */
export function evaluate(expression: string, root: Value): Value {
  const tokens = tokenize(expression);
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const t = tokens[at++];
    if (t === undefined || (expected !== undefined && t !== expected))
      throw new FigureError(`"${expression}": expected ${expected ?? 'more'}, got ${t ?? 'the end'}`);
    return t;
  };
  const asNumber = (v: Value, what: string): number => {
    if (typeof v !== 'number')
      throw new FigureError(`"${expression}": ${what} is ${JSON.stringify(v)}, not a number`);
    return v;
  };

  // A path: an identifier, then .key, ['key'], [n] or [*] (every element: the value becomes a list).
  const path = (first: string): Value => {
    let values: Value[] = [root];
    let spread = false;
    const step = (key: string) => {
      values = values.map((v) => {
        const next = v !== null && typeof v === 'object' ? (v as Record<string, Value>)[key] : undefined;
        if (next === undefined) throw new FigureError(`"${expression}": no ${key} in the results file`);
        return next;
      });
    };
    step(first);
    for (;;) {
      if (peek() === '.') {
        take();
        step(take());
      } else if (peek() === '[*]') {
        take();
        spread = true;
        values = values.flatMap((v) => {
          if (!Array.isArray(v)) throw new FigureError(`"${expression}": [*] on a value that is not a list`);
          return v as Value[];
        });
      } else if (peek() === '[') {
        take();
        const key = take();
        if (peek() === ':') {
          // [from:] or [from:to]: a slice, as in JavaScript's Array.slice.
          take(':');
          const to = peek() === ']' ? undefined : Number(take());
          take(']');
          spread = true;
          values = values.flatMap((v) => {
            if (!Array.isArray(v))
              throw new FigureError(`"${expression}": [${key}:] on a value that is not a list`);
            return (v as Value[]).slice(Number(key), to);
          });
          continue;
        }
        take(']');
        step(key.startsWith("'") ? key.slice(1) : key);
      } else break;
    }
    return spread ? values : values[0];
  };

  const primary = (): Value => {
    const t = take();
    if (t === '(') {
      const v = sum();
      take(')');
      return v;
    }
    if (t === '-') return -asNumber(primary(), 'the operand of -');
    if (/^\d/.test(t)) return Number(t);
    if ((t in listFunctions || t === 'countOf') && peek() === '(') {
      take('(');
      const list = sum();
      const of = t === 'countOf' ? (take(','), sum()) : undefined;
      take(')');
      if (!Array.isArray(list) || list.length === 0)
        throw new FigureError(`"${expression}": ${t}() needs a non-empty list (a path with [*])`);
      if (t === 'countOf') return list.filter((x) => x === of).length;
      return listFunctions[t]!(list.map((x) => asNumber(x, `an element of ${t}()`)));
    }
    return path(t);
  };
  const product = (): Value => {
    let v = primary();
    while (peek() === '*' || peek() === '/') {
      const op = take();
      const r = asNumber(primary(), `the right side of ${op}`);
      v = op === '*' ? asNumber(v, `the left side of ${op}`) * r : asNumber(v, `the left side of ${op}`) / r;
    }
    return v;
  };
  const sum = (): Value => {
    let v = product();
    while (peek() === '+' || peek() === '-') {
      const op = take();
      const r = asNumber(product(), `the right side of ${op}`);
      v = op === '+' ? asNumber(v, `the left side of ${op}`) + r : asNumber(v, `the left side of ${op}`) - r;
    }
    return v;
  };

  const value = sum();
  if (at !== tokens.length) throw new FigureError(`"${expression}": unexpected ${tokens[at]}`);
  return value;
}

/** Formats a value as the docs quote it (see the module comment). */
export function format(value: Value, spec: string | undefined, expression: string): string {
  if (typeof value === 'string') {
    if (spec === 'short') return value.slice(0, 7);
    if (spec === 'day') return value.slice(0, 10);
    if (spec === undefined) return value;
  }
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new FigureError(
      `{${expression}} is ${JSON.stringify(value)}: not a number to format as ${spec ?? 'is'}`,
    );
  if (spec === undefined) {
    if (!Number.isInteger(value))
      throw new FigureError(`{${expression}} is ${value}: say how many decimals (|.N)`);
    return String(value);
  }
  const m = /^(,)?(?:\.(\d))?$/.exec(spec);
  if (!m || (m[1] === undefined && m[2] === undefined))
    throw new FigureError(`{${expression}}: unknown format ${spec}`);
  const digits = Number(m[2] ?? 0);
  // Rounded half away from zero on the decimal digits, as a reader rounds (toFixed works on the binary value).
  const shifted = Number(`${Math.abs(value)}e${digits}`);
  const rounded = Number.isFinite(shifted)
    ? (Math.sign(value) * Math.round(shifted)) / 10 ** digits
    : Number(value.toFixed(digits));
  return m[1]
    ? rounded.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : rounded.toFixed(digits);
}

/** A quote with its placeholders filled from a results file. */
export function render(quote: string, results: Value): string {
  return quote.replace(/\{([^{}|]+)(?:\|([^{}]+))?\}/g, (_, expression: string, spec?: string) =>
    format(evaluate(expression.trim(), results), spec?.trim(), expression.trim()),
  );
}

/** Whitespace as a reader sees it: line breaks and table padding are one space. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
