/**
 * A campaign resumes from its last checkpoint, so a failure loses up to saveFreq - 1 steps of
 * training (verl saves every saveFreq steps and at the last). The stated bound: a resume should lose
 * at most a quarter of the run; past that the campaign still starts, with a warning.
 */
export const RESUME_LOSS_BOUND = 0.25;

export function resumeLossWarning(trainer: {
  saveFreq: number;
  totalTrainingSteps: number;
}): string | undefined {
  const { saveFreq, totalTrainingSteps: total } = trainer;
  const worst = Math.min(saveFreq, total) - 1;
  if (worst <= total * RESUME_LOSS_BOUND) return undefined;
  const suggested = Math.max(1, Math.floor(total * RESUME_LOSS_BOUND));
  return (
    `warning: trainer.saveFreq ${saveFreq} of ${total} steps: a resume can lose up to ${worst} steps ` +
    `(${Math.round((worst / total) * 100)}% of the run, more than the ${RESUME_LOSS_BOUND * 100}% bound); ` +
    `set trainer.saveFreq to ${suggested} or less to bound the loss`
  );
}
