/**
 * Kubernetes resource quantities (`512Mi`, `32Gi`, `1.5G`, `2e9`), parsed to a number so that the
 * spec can compare them (a shm size above the memory limit, a limit below its request) before
 * anything is created. The string itself goes into the Pod unchanged.
 */
const QUANTITY =
  /^(?<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;

const FACTORS: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The quantity's value in base units (bytes for memory), or undefined when it is not a quantity. */
export function parseQuantity(text: string): number | undefined {
  const groups = QUANTITY.exec(text)?.groups;
  if (!groups?.['number']) return undefined;
  const suffix = groups['suffix'] ?? '';
  const factor = suffix === '' ? 1 : /^[eE]/.test(suffix) ? 10 ** Number(suffix.slice(1)) : FACTORS[suffix];
  return factor === undefined ? undefined : Number(groups['number']) * factor;
}
