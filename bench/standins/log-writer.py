"""Stand-in training job for the log benches: prints `total_mb` of console lines at a steady pace
over `seconds`, with a verl-style step line every `lines_per_step` lines. Not RAGEN: only its log."""
import sys
import time

total_mb, seconds, lines_per_step = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
line = "(WorkerDict pid=4242) INFO rollout worker: generated batch, tokens=512 " + "x" * 120
total_lines = int(total_mb * 1e6 / (len(line) + 1))
ticks = max(1, int(seconds / 0.05))
per_tick = max(1, total_lines // ticks)
start = time.monotonic()
step = 0
written = 0
for tick in range(ticks + 1):
    chunk = []
    for _ in range(min(per_tick, total_lines - written)):
        written += 1
        if written % lines_per_step == 0:
            step += 1
            chunk.append(f"(TaskRunner pid=1) step:{step} - critic/score/mean:{step / 1000:.3f} - actor/loss:{1 / step:.4f} - timing_s/step:0.05")
        else:
            chunk.append(line)
    if chunk:
        sys.stdout.write("\n".join(chunk) + "\n")
        sys.stdout.flush()
    if written >= total_lines:
        break
    time.sleep(max(0.0, start + (tick + 1) * 0.05 - time.monotonic()))
print(f"wrote {written} lines, {step} steps", flush=True)
