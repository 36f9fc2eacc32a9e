import { z } from 'zod';

/**
 * The model the trainer loads (RAGEN's `model_path`). Preferred: `path`, a Hugging Face directory on
 * storage every node mounts. Or `hub` + a pinned `revision`: the worker stages it once into
 * `hfHome` on shared storage (huggingface_hub's cache layout), and training runs offline from there.
 */
export const ModelSchema = z
  .strictObject({
    path: z.string().optional(),
    hub: z
      .string()
      .regex(/^[\w.-]+\/[\w.-]+$/, 'a Hugging Face repository id such as Qwen/Qwen2.5-0.5B-Instruct')
      .optional(),
    revision: z
      .string()
      .regex(/^[0-9a-f]{40}$/, 'the full 40-hex commit of the Hub repository (a branch name moves)')
      .optional(),
    hfHome: z.string().optional(),
  })
  .superRefine((m, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if ((m.path === undefined) === (m.hub === undefined))
      issue(
        'path',
        'set either model.path (a model directory on shared storage) or model.hub with model.revision and model.hfHome',
      );
    if (m.path !== undefined && !m.path.startsWith('/'))
      issue(
        'path',
        'must be an absolute path (every node resolves it the same way); write it starting with /',
      );
    if (m.path !== undefined && (m.revision !== undefined || m.hfHome !== undefined))
      issue(
        'revision',
        'model.revision and model.hfHome go with model.hub; a model.path is fingerprinted instead',
      );
    if (m.hub !== undefined) {
      if (m.revision === undefined)
        issue(
          'revision',
          `pin model.hub ${m.hub} to a commit: the 40-hex sha of the revision to train (see the repository's "Files and versions")`,
        );
      if (m.hfHome === undefined || !m.hfHome.startsWith('/'))
        issue(
          'hfHome',
          'an absolute directory on shared storage where the model is staged (HF_HOME); every node reads it offline',
        );
    }
  });
export type ModelSource = z.infer<typeof ModelSchema>;

/** huggingface_hub's cache folder name for a model repository. */
export function hubCacheFolder(hub: string): string {
  return `models--${hub.replace(/\//g, '--')}`;
}

/**
 * The directory the trainer loads (`model_path=`): the path itself, or the staged snapshot of the
 * pinned revision, `<hfHome>/hub/models--org--name/snapshots/<revision>` (a pure string: the path is
 * known before staging, so the command line does not depend on it).
 */
export function modelDirectory(model: ModelSource): string {
  if (model.path !== undefined) return model.path;
  return `${model.hfHome ?? ''}/hub/${hubCacheFolder(model.hub ?? '')}/snapshots/${model.revision ?? ''}`.replace(
    /\/{2,}/g,
    '/',
  );
}

/** A hub model trains offline from the staged cache; a path model needs neither. */
export function modelJobEnv(model: ModelSource | undefined): Record<string, string> {
  if (model?.hub === undefined || model.hfHome === undefined) return {};
  return { HF_HOME: model.hfHome, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' };
}
