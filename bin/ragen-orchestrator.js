#!/usr/bin/env node
// `npx ragen-orchestrator <command>`: the built CLI (dist/cli/main.js, from `npm run build`) when it is
// newer than every source file, else the TypeScript entry through tsx, so an edit after a build is
// never run stale. Without tsx (an install without devDependencies) the build is used as it is.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'main.js');
const sources = join(root, 'src');

function newestSource() {
  if (!existsSync(sources)) return 0;
  return Math.max(
    ...readdirSync(sources, { recursive: true }).map((f) => statSync(join(sources, f)).mtimeMs),
  );
}

function hasTsx() {
  try {
    createRequire(join(root, 'package.json')).resolve('tsx');
    return true;
  } catch {
    return false;
  }
}

const useBuild = existsSync(built) && (statSync(built).mtimeMs >= newestSource() || !hasTsx());
const entry = useBuild ? [built] : ['--import', 'tsx', join(sources, 'cli', 'main.ts')];
const child = spawn(process.execPath, [...entry, ...process.argv.slice(2)], { stdio: 'inherit' });
// Ctrl-C reaches the child from the terminal itself (one process group): this process only waits.
// A SIGTERM sent to this process alone is passed on.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('error', (err) => {
  console.error(`ragen-orchestrator: cannot start node: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
