import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  campaignManifestPath,
  checkpointPath,
  ledgerPath,
  manifestPath,
  runArchiveDir,
  runCheckpointDir,
  sweepManifestPaths,
  validationResultsPath,
} from '../../src/domain/spec/paths.js';

describe('storage paths (one module)', () => {
  const storage = { checkpointDir: '/data/ckpt', archiveDir: '/data/archive/' };

  it('puts every run, campaign and sweep under <root>/<name>/<workflow id>', () => {
    assert.equal(runCheckpointDir(storage, 'sokoban', 'wf-1'), '/data/ckpt/sokoban/wf-1');
    assert.equal(
      runArchiveDir(storage, 'sokoban', 'wf-1'),
      '/data/archive/sokoban/wf-1',
      'a trailing slash does not double',
    );
    assert.equal(
      manifestPath(storage.archiveDir, 'sokoban', 'wf-1'),
      '/data/archive/sokoban/wf-1/manifest.json',
    );
    assert.equal(
      validationResultsPath(runArchiveDir(storage, 'sokoban', 'wf-1')),
      '/data/archive/sokoban/wf-1/validation.json',
    );
    assert.equal(
      campaignManifestPath(storage.archiveDir, 'sokoban', 'c-1'),
      '/data/archive/sokoban/c-1/campaign.json',
    );
    assert.equal(
      ledgerPath(storage.archiveDir, 'sokoban', 'c-1'),
      '/data/archive/sokoban/c-1/checkpoints.json',
    );
    assert.deepEqual(sweepManifestPaths(storage.archiveDir, 'grid', 's-1'), {
      manifestPath: '/data/archive/grid/s-1/sweep.json',
      csvPath: '/data/archive/grid/s-1/sweep.csv',
    });
  });

  it("names verl's checkpoint folders global_step_N", () => {
    assert.equal(checkpointPath('/data/ckpt/sokoban/wf-1', 20), '/data/ckpt/sokoban/wf-1/global_step_20');
  });
});
