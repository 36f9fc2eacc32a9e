"""The Temporal activities the sweep workflow calls for `search: {type: tpe}` (task queue ragen-search)."""

from __future__ import annotations

from typing import Any

from temporalio import activity

from .study import AskInput, TellInput, ask, tell


class SearchActivities:
    """`storage`: an Optuna storage URL (SQLite file under the run root, or PostgreSQL)."""

    def __init__(self, storage: str) -> None:
        self.storage = storage

    @activity.defn(name="tpeAsk")
    def tpe_ask(self, inp: AskInput) -> dict[str, Any]:
        """Idempotent per (study, index): a retry answers the same trial's parameters."""
        return ask(self.storage, inp)

    @activity.defn(name="tpeTell")
    def tpe_tell(self, inp: TellInput) -> str:
        """Idempotent per (study, index): a finished trial is never told again."""
        return tell(self.storage, inp)
