import { CampaignBudgetsSchema, type CampaignSpec } from '../../domain/campaign/campaign.js';
import { ExperimentSpecSchema } from '../../domain/spec/experiment.js';
import { runSetupIssues } from '../../domain/spec/run-setup.js';
import { readSpecFile } from './load.js';
import { parseYamlMapping } from '../../config/yaml-mapping.js';
import { SpecError, issuesFromZod } from '../../domain/spec/spec-error.js';

/**
 * A campaign spec is an experiment spec plus an optional `campaign:` block (budgets). Both parts are
 * validated together, so every bad field is reported at once with its full path.
 */
export function parseCampaignSpec(text: string, source = 'spec'): CampaignSpec {
  const { campaign, ...experiment } = parseYamlMapping(text, source);
  const exp = ExperimentSpecSchema.safeParse(experiment);
  const budgets = CampaignBudgetsSchema.safeParse(campaign ?? {});
  const issues = [
    ...(exp.success ? [] : issuesFromZod(exp.error)),
    ...(budgets.success
      ? []
      : issuesFromZod(budgets.error).map((i) => ({
          ...i,
          field: i.field ? `campaign.${i.field}` : 'campaign',
        }))),
  ];
  if (exp.success) issues.push(...runSetupIssues(exp.data));
  if (!exp.success || !budgets.success || issues.length > 0) throw new SpecError(source, issues);
  return { experiment: exp.data, budgets: budgets.data };
}

export async function loadCampaignSpec(path: string): Promise<CampaignSpec> {
  return parseCampaignSpec(await readSpecFile(path), path);
}
