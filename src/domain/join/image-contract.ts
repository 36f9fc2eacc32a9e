import { z } from 'zod';

/**
 * What the image (locally: the venv) must provide, checked on every node by the environment probe
 * right after join (probes/ragen_probes/environment.py). Defaults follow the trainer's kind.
 */
export const ImageContractSchema = z.strictObject({
  /** Modules every node must import; default by trainer kind (IMAGE_REQUIRES). */
  requires: z
    .array(z.string().regex(/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/, 'a Python module name such as flash_attn'))
    .optional(),
  /** The Python major.minor every node must run, such as 3.12 (RAGEN's setup uses 3.12). */
  python: z
    .string()
    .regex(/^\d+\.\d+$/, 'a major.minor version such as 3.12')
    .optional(),
  /** torch.cuda.device_count() must equal trainer.nGpusPerNode on GPU nodes; default by trainer kind. */
  gpuCheck: z.boolean().optional(),
});
export type ImageContract = z.infer<typeof ImageContractSchema>;

/**
 * `payload`: the toy trainer (`python -m ragen_toy.…`), which needs no torch and runs on logical
 * GPUs; `ragen`: anything else, RAGEN's train.py by default on kuberay.
 */
export type TrainerKind = 'ragen' | 'payload';

/** What each kind imports at start: RAGEN's train.py and its workers (verl, vLLM rollout, flash-attn padding). */
export const IMAGE_REQUIRES: Record<TrainerKind, readonly string[]> = {
  ragen: ['torch', 'verl', 'ragen', 'vllm', 'flash_attn', 'hydra'],
  payload: ['ragen_toy', 'numpy', 'ray'],
};

export function trainerKind(entrypoint: readonly string[]): TrainerKind {
  const m = entrypoint.indexOf('-m');
  return m >= 0 && entrypoint[m + 1]?.startsWith('ragen_toy.') ? 'payload' : 'ragen';
}

/** The contract with the defaults of the trainer's kind filled in. */
export function resolvedImageContract(
  spec: { imageContract?: ImageContract | undefined },
  entrypoint: readonly string[],
): { kind: TrainerKind; requires: string[]; python?: string; gpuCheck: boolean } {
  const kind = trainerKind(entrypoint);
  const c = spec.imageContract ?? {};
  return {
    kind,
    requires: [...(c.requires ?? IMAGE_REQUIRES[kind])],
    ...(c.python ? { python: c.python } : {}),
    gpuCheck: c.gpuCheck ?? kind === 'ragen',
  };
}
