/**
 * A worker process on fake activities (stand-ins for Ray: every stage returns at once), the real
 * workflow code from a prebuilt bundle: bench/server-throughput.ts runs several of these so the
 * server, not the activities, is what is measured. Env: TEMPORAL_ADDRESS, BENCH_TASK_QUEUE,
 * BENCH_WORKFLOW_BUNDLE. Prints `polling` once it polls; stops on SIGTERM.
 */
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { fakeActivities } from '../../test/helpers/fake-activities.js';

Runtime.install({ logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error } });
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
const worker = await Worker.create({
  connection,
  taskQueue: process.env.BENCH_TASK_QUEUE ?? 'bench-throughput',
  workflowBundle: { codePath: process.env.BENCH_WORKFLOW_BUNDLE ?? '' },
  activities: fakeActivities().activities,
});
process.once('SIGTERM', () => worker.shutdown());
console.log('polling');
await worker.run();
await connection.close();
