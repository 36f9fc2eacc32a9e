/**
 * Each progress signal costs the workflow about four history events (the signal and a workflow
 * task), so the train activity signals only what the workflow needs: the first training step (the
 * status shows training began) and a checkpoint at most every `intervalMs` (default
 * CHECKPOINT_REPORT_INTERVAL_MS; RAGEN_CHECKPOINT_SIGNAL_SECONDS), or at once when a pause waits
 * for it. The live step travels in the heartbeat details instead (no
 * history; `status`/`run` read them), so a run's history does not grow with its step count.
 */
export const CHECKPOINT_REPORT_INTERVAL_MS = 10 * 60_000;

export class ProgressCadence {
  private firstStepReported: boolean;
  private lastCheckpointReportAt = Number.NEGATIVE_INFINITY;

  /**
   * `alreadyTrained`: a previous attempt reported the first step. `pausePending` asks the workflow
   * (a query: no history) whether a pause waits for the next checkpoint; an error counts as yes.
   */
  constructor(
    alreadyTrained: boolean,
    private readonly pausePending: () => Promise<boolean>,
    private readonly intervalMs = CHECKPOINT_REPORT_INTERVAL_MS,
  ) {
    this.firstStepReported = alreadyTrained;
  }

  /** Whether this change (a first step, a new checkpoint) is signalled; call once per change. */
  async due(change: { trained: boolean; newCheckpoint: boolean; now: number }): Promise<boolean> {
    if (change.trained && !this.firstStepReported) {
      this.firstStepReported = true;
      if (change.newCheckpoint) this.lastCheckpointReportAt = change.now;
      return true;
    }
    if (!change.newCheckpoint) return false;
    const due =
      change.now - this.lastCheckpointReportAt >= this.intervalMs ||
      (await this.pausePending().catch(() => true));
    if (due) this.lastCheckpointReportAt = change.now;
    return due;
  }
}
