/**
 * The applyCheckpointRetention activity in a process of its own, so a test can SIGKILL it in the
 * middle of a deletion (as a worker dies). Input: the activity's input as JSON in argv[2].
 */
import { createApplyCheckpointRetention } from '../../src/activities/checkpoints/checkpoint-retention.js';
import type { RetentionInput } from '../../src/activities/checkpoints/checkpoint-retention.js';

const input = JSON.parse(process.argv[2] ?? '{}') as RetentionInput;
const result = await createApplyCheckpointRetention()(input);
console.log(JSON.stringify(result));
