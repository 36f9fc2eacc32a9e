#!/usr/bin/env node
// `npx ragen-orchestrator <command>`: the built CLI (dist/cli.js, from `npm run build`) when it is
// there, else the TypeScript entry through tsx (a checkout without a build).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli.js');
const args = existsSync(built)
  ? [built, ...process.argv.slice(2)]
  : ['--import', 'tsx', join(root, 'src', 'cli.ts'), ...process.argv.slice(2)];
const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
if (result.error) {
  console.error(`ragen-orchestrator: cannot start node: ${result.error.message}`);
  process.exit(1);
}
// A signal that ended the child ends this process the same way (Ctrl-C in `dev`).
if (result.signal) process.kill(process.pid, result.signal);
process.exit(result.status ?? 1);
