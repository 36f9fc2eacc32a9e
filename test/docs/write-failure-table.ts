/** `npm run docs:failures`: writes the failure table of docs/reference.md from the failure catalogue. */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAILURE_TABLE_DOC, renderFailureTable, withTable } from './failure-table.js';

const path = join(dirname(fileURLToPath(import.meta.url)), '..', '..', FAILURE_TABLE_DOC);
const doc = readFileSync(path, 'utf8');
const next = withTable(doc, renderFailureTable());
writeFileSync(path, next);
console.log(next === doc ? `${FAILURE_TABLE_DOC}: unchanged` : `${FAILURE_TABLE_DOC}: failure table written`);
