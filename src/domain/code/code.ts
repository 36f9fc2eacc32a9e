import { z } from 'zod';

/** Ray keeps packages in its GCS: it refuses one over 512 MiB; a working tree that large is data, not code. */
export const CODE_MAX_SIZE_MB_LIMIT = 500;
/** Default archive limit: a RAGEN working copy with its verl submodule is about 21 MB. */
export const CODE_MAX_SIZE_MB_DEFAULT = 100;

/**
 * `code`: a local checkout (a RAGEN working copy, say) shipped with every Ray job of the run as its
 * runtime_env `working_dir`, so a code change needs no new image. The path is read by the worker.
 */
export const CodeSchema = z.strictObject({
  path: z.string().refine((p) => p.startsWith('/'), {
    message:
      'must be an absolute path to a directory the worker can read (a RAGEN working copy, say); write it starting with /',
  }),
  /**
   * Patterns left out of the archive on top of the tree's .gitignore files, read as the lines of a
   * .gitignore at the tree's top (src/domain/code/code-tree.ts): `*` and `?` within a name, `**` across
   * folders, a trailing `/` for folders, a leading `/` (or a `/` inside) anchors the pattern at the
   * tree's top, `!` re-includes; otherwise a pattern matches a name at any depth.
   */
  exclude: z.array(z.string().min(1)).default([]),
  /** Refuse an archive larger than this (uncompressed bytes of the files that travel). */
  maxSizeMb: z
    .number()
    .positive()
    .max(
      CODE_MAX_SIZE_MB_LIMIT,
      `at most ${CODE_MAX_SIZE_MB_LIMIT}: Ray's package store refuses larger archives; leave data out with code.exclude`,
    )
    .default(CODE_MAX_SIZE_MB_DEFAULT),
});
export type CodeSettings = z.infer<typeof CodeSchema>;

/** The git state of a shipped tree, when it is in a git work tree. */
export const ShippedGitSchema = z.strictObject({
  commit: z.string(),
  /** Tracked files changed against the commit, or untracked files shipped. */
  dirty: z.boolean(),
  /** `git diff HEAD` of the tree, written next to the manifest (file name only); absent when clean. */
  diff: z.string().optional(),
  /** Shipped files git does not track (their bytes are in the archive, not in the diff). */
  untracked: z.array(z.string()).optional(),
});

/**
 * A shipped tree as it was packed, once per run (code.json next to the manifest): the package's
 * content address and where the tree came from. Nothing here says where the archive is stored.
 */
export const ShippedCodeSchema = z.strictObject({
  path: z.string(),
  /** `_ray_pkg_<sha1 of the zip>.zip`: the name Ray's package API takes. */
  package: z.string(),
  /** `gcs://<package>`: runtime_env.working_dir. */
  uri: z.string(),
  /** sha256 of the archive's bytes. */
  sha256: z.string(),
  archiveBytes: z.number(),
  /** Bytes of the files before compression, and how many. */
  treeBytes: z.number(),
  files: z.number(),
  /** How the file list was made: git's view of the tree (.gitignore honoured) or a walk of a tree outside git. */
  listedBy: z.enum(['git', 'git-ignore-rules', 'walk']),
  exclude: z.array(z.string()),
  git: ShippedGitSchema.optional(),
});
export type ShippedCode = z.infer<typeof ShippedCodeSchema>;

/** Where the code that trained came from, in the manifest: the image, or a tree shipped with the jobs. */
export const CodeSourceSchema = z.discriminatedUnion('from', [
  z.strictObject({
    from: z.literal('image'),
    ref: z.string().optional(),
    digest: z.string().optional(),
    /** The image's code labels (revision, source, RAGEN and verl commits) and WORKDIR. */
    labels: z.record(z.string(), z.string()),
  }),
  z.strictObject({
    from: z.literal('worker-python'),
    note: z.string(),
  }),
  ShippedCodeSchema.extend({ from: z.literal('shipped') }),
]);
export type CodeSource = z.infer<typeof CodeSourceSchema>;
