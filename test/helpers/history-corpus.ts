/**
 * The recorded histories, one folder per release (test/workflows/histories/<x.y.z>/): each holds
 * what the code of that release's line recorded, from the release before it up to its tag. The
 * replay test replays them all; the patch coverage test reads their events.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of release folders. */
export const historiesRoot = fileURLToPath(new URL('../workflows/histories/', import.meta.url));

/** A release folder's name: the version, as package.json spells it. */
export const RELEASE_FOLDER = /^\d+\.\d+\.\d+$/;

/** The release the checkout's code is (package.json): new recordings go into its folder. */
export function currentRelease(): string {
  const url = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

export interface RecordedHistory {
  release: string;
  file: string;
  /** The workflow id it was recorded under: the file name, URI-decoded. */
  workflowId: string;
  path: string;
}

/** Every entry of the root folder: release folders, and whatever else is there (the test refuses it). */
export function corpusEntries(): { releases: string[]; strays: string[] } {
  const names = readdirSync(historiesRoot).sort();
  const isRelease = (n: string) => RELEASE_FOLDER.test(n) && statSync(join(historiesRoot, n)).isDirectory();
  return {
    releases: names.filter(isRelease).sort(byVersion),
    strays: names.filter((n) => !isRelease(n) && n !== 'README.md'),
  };
}

/** The histories of one release folder, by file name. */
export function historiesOf(release: string): RecordedHistory[] {
  const dir = join(historiesRoot, release);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({
      release,
      file,
      workflowId: decodeURIComponent(file.replace(/\.json$/, '')),
      path: join(dir, file),
    }));
}

/** Every history of every release folder, oldest release first. */
export function allHistories(): RecordedHistory[] {
  return corpusEntries().releases.flatMap(historiesOf);
}

function byVersion(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return 0;
}
