"""Ask and tell on a durable Optuna study, idempotent per sweep child (its index is the trial key).

A retried ask finds the trial already made for that index (user attr `ragen.index`) and answers
its parameters again; a retried tell of a finished trial changes nothing. So an activity retry
never makes a second trial, and never tells one twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional

import optuna
from optuna.trial import FrozenTrial, TrialState

INDEX_ATTR = "ragen.index"

optuna.logging.set_verbosity(optuna.logging.WARNING)


@dataclass
class AskInput:
    """`study`: the sweep's workflow id; `index`: the child's index; `space`: the spec's params;
    `trials`: the sweep's budget (a third of it, 2 to 10, is spent on random startup trials)."""

    study: str
    index: int
    seed: int
    direction: Literal["max", "min"]
    space: dict[str, dict[str, Any]]
    trials: int = 30


@dataclass
class TellInput:
    """`state`: complete (with `value`), pruned (with its last rung value, if any) or fail."""

    study: str
    index: int
    state: Literal["complete", "pruned", "fail"]
    value: Optional[float] = None
    step: Optional[int] = None


def startup_trials(trials: int) -> int:
    """Optuna's default is 10 random trials before TPE models anything: too many for a small sweep."""
    return max(2, min(10, trials // 3))


def _sampler(seed: int, index: int, trials: int = 30) -> optuna.samplers.TPESampler:
    # A fresh sampler per ask, seeded by the sweep's seed and the child's index: the answer depends
    # on the study's trials only, never on which worker process (or restart) asks.
    # constant_liar: children still running count as bad guesses, so parallel asks spread out.
    return optuna.samplers.TPESampler(
        seed=seed * 100_003 + index, constant_liar=True, n_startup_trials=startup_trials(trials)
    )


def _open(
    storage: str, name: str, seed: int = 0, index: int = 0, direction: str = "max", trials: int = 30
) -> optuna.Study:
    return optuna.create_study(
        storage=storage,
        study_name=name,
        sampler=_sampler(seed, index, trials),
        direction="maximize" if direction == "max" else "minimize",
        load_if_exists=True,
    )


def _trial_of(study: optuna.Study, index: int) -> Optional[FrozenTrial]:
    for t in study.get_trials(deepcopy=False):
        if t.user_attrs.get(INDEX_ATTR) == index:
            return t
    return None


def ask(storage: str, inp: AskInput) -> dict[str, Any]:
    """The parameters for child `index`: a new trial's, or the one already asked for it."""
    from .space import distributions

    study = _open(storage, inp.study, inp.seed, inp.index, inp.direction, inp.trials)
    existing = _trial_of(study, inp.index)
    if existing is not None:
        return dict(existing.params)
    trial = study.ask(distributions(inp.space))
    trial.set_user_attr(INDEX_ATTR, inp.index)
    return dict(trial.params)


_STATES = {"complete": TrialState.COMPLETE, "pruned": TrialState.PRUNED, "fail": TrialState.FAIL}


def tell(storage: str, inp: TellInput) -> str:
    """Tell child `index`'s outcome once; answers what the study holds for it afterwards."""
    study = _open(storage, inp.study)
    trial = _trial_of(study, inp.index)
    if trial is None:
        return "unknown"  # never asked (a refused child): nothing to tell
    if trial.state.is_finished():
        return trial.state.name.lower()
    state = _STATES[inp.state]
    if state == TrialState.COMPLETE and inp.value is None:
        state = TrialState.FAIL  # succeeded without a value: the objective cannot rank it
    if state == TrialState.PRUNED and inp.value is not None and inp.step is not None:
        # TPE ranks pruned trials by their last intermediate value: the rung value ASHA judged.
        optuna.trial.Trial(study, trial._trial_id).report(inp.value, inp.step)
    study.tell(trial.number, inp.value if state == TrialState.COMPLETE else None, state=state)
    return state.name.lower()
