import { execFile } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/config.js';

const run = promisify(execFile);

/**
 * Stand-in for the Python of an image that has Ray and numpy but nothing of this project: a venv
 * whose only site-packages entry is the project venv's site-packages directory, added as a plain
 * path. Python processes .pth files only in site directories, so the payload's editable install
 * (a .pth hook there) is not loaded: `import ray, numpy` works, `import ragen_toy` does not.
 * Returns its `python` and a `ray` launcher running on it (Ray's workers use the same interpreter).
 */
export async function barePython(dir: string): Promise<{ python: string; rayBin: string }> {
  const venvPython = loadConfig().python;
  await run(venvPython, ['-m', 'venv', '--without-pip', dir]);
  const { stdout } = await run(venvPython, [
    '-c',
    'import ray, os; print(os.path.dirname(os.path.dirname(ray.__file__)))',
  ]);
  const { stdout: pyVersion } = await run(venvPython, [
    '-c',
    'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")',
  ]);
  await writeFile(
    join(dir, 'lib', pyVersion.trim(), 'site-packages', 'project-venv-site-packages.pth'),
    `${stdout.trim()}\n`,
  );
  const python = join(dir, 'bin', 'python');
  const rayBin = join(dir, 'bin', 'ray');
  await writeFile(
    rayBin,
    `#!${python}\nimport sys\nfrom ray.scripts.scripts import main\nsys.exit(main())\n`,
  );
  await chmod(rayBin, 0o755);
  return { python, rayBin };
}

/** Whether `python -c 'import <module>'` succeeds. */
export async function canImport(python: string, module: string): Promise<boolean> {
  try {
    await run(python, ['-c', `import ${module}`]);
    return true;
  } catch {
    return false;
  }
}
