/** The last `lines` lines of a log, quoted in a failed job's message. */
export function logTail(logs: string, lines = 30): string {
  return logs.split('\n').slice(-lines).join('\n');
}
