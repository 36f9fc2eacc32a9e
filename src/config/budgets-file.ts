import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseYamlMapping } from './yaml-mapping.js';
import { type BudgetsFile, parseBudgets } from '../domain/budget/budgets.js';

/** Read and validate budgets.yaml; a bad file throws SpecError naming each field and its fix. */
export async function loadBudgetsFile(path: string): Promise<BudgetsFile> {
  const text = await readFile(path, 'utf8');
  return parseBudgets(parseYamlMapping(text, path, 'budgets file'), path);
}

/** The same, at once: for the worker's patch activation callback, which cannot wait. */
export function loadBudgetsFileNow(path: string): BudgetsFile {
  return parseBudgets(parseYamlMapping(readFileSync(path, 'utf8'), path, 'budgets file'), path);
}
