import {
  CampaignManifestSchema,
  type CampaignManifest,
  type CampaignManifestDraft,
} from '../../domain/campaign/campaign.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { campaignManifestPath } from '../../domain/spec/paths.js';
import { readLedger } from './campaign-checkpoints.js';
import { permanent } from '../common/failures.js';
import { sha256OfFile, writeOnce } from '../common/write-once.js';

/**
 * The campaign's manifest: lineage of every attempt, each linked to its own manifest by path and
 * sha256, and every checkpoint of the ledger. Validated with its zod schema and written once
 * (link(2)); a retry with the same bytes succeeds, a different existing file is never overwritten.
 */
export function createArchiveCampaign() {
  return async function archiveCampaign(input: {
    draft: CampaignManifestDraft;
    archiveDir: string;
    untrusted: CampaignManifest['untrusted'];
  }): Promise<{ manifestPath: string; sha256: string }> {
    const { ledgerPath, ...draft } = input.draft;
    const ledger = await readLedger(ledgerPath);
    const attempts = [];
    for (const a of draft.attempts)
      attempts.push({ ...a, manifestSha256: await sha256OfFile(a.manifestPath) });
    const manifest: CampaignManifest = CampaignManifestSchema.parse({
      schemaVersion: 1,
      ...draft,
      attempts,
      checkpoints: ledger.checkpoints.map((c) => ({ step: c.step, sha256: c.sha256 })),
      untrusted: input.untrusted,
      ...(ledger.deleted?.length ? { deleted: ledger.deleted } : {}),
    });
    const path = campaignManifestPath(input.archiveDir, draft.experiment, draft.campaign);
    const { sha256, existing } = await writeOnce(path, `${JSON.stringify(manifest, null, 2)}\n`);
    if (existing)
      throw permanent(
        ErrorTypes.ManifestExists,
        `a different campaign manifest already exists at ${path}; it is kept (sha256 ${existing})`,
      );
    return { manifestPath: path, sha256 };
  };
}
