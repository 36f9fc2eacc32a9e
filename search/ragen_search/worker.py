"""`python -m ragen_search.worker`: the search worker, polling RAGEN_SEARCH_TASK_QUEUE (ragen-search).

Environment: TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default), RAGEN_SEARCH_STORAGE
(an Optuna storage URL, e.g. postgresql://...; default sqlite under RAGEN_RUN_ROOT/search/).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from .activities import SearchActivities

DEFAULT_TASK_QUEUE = "ragen-search"


def storage_url(env: dict[str, str]) -> str:
    """The configured URL, or a SQLite file under the run root (made here, so the study is durable)."""
    if env.get("RAGEN_SEARCH_STORAGE"):
        return env["RAGEN_SEARCH_STORAGE"]
    folder = Path(env.get("RAGEN_RUN_ROOT", "/tmp/ro")) / "search"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'optuna.db'}"


async def main() -> None:
    started = time.perf_counter()
    env = dict(os.environ)
    client = await Client.connect(
        env.get("TEMPORAL_ADDRESS", "localhost:7233"), namespace=env.get("TEMPORAL_NAMESPACE", "default")
    )
    task_queue = env.get("RAGEN_SEARCH_TASK_QUEUE", DEFAULT_TASK_QUEUE)
    acts = SearchActivities(storage_url(env))
    # One thread: asks are sequential by nature (each learns from the last), and SQLite has one writer.
    with ThreadPoolExecutor(max_workers=1) as pool:
        worker = Worker(
            client,
            task_queue=task_queue,
            activities=[acts.tpe_ask, acts.tpe_tell],
            activity_executor=pool,
        )
        line = {
            "level": "info",
            "msg": "search worker: polling task queue",
            "taskQueue": task_queue,
            "startMs": round((time.perf_counter() - started) * 1000),
            "maxRssKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        }
        print(json.dumps(line), flush=True)
        await worker.run()


if __name__ == "__main__":
    asyncio.run(main())
