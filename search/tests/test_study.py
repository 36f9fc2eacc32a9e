"""Ask and tell against a real study (SQLite and PostgreSQL, conftest.py): parameters in range, idempotent under retry, TPE learns."""

import math

import optuna
import pytest

from ragen_search.space import distribution
from ragen_search.study import AskInput, TellInput, ask, tell

SPACE = {
    "algorithm.lr": {"logUniform": [1e-5, 1e-1]},
    "x": {"uniform": [0.0, 1.0]},
    "n": {"intRange": [1, 4]},
    "opt": {"choice": ["adam", "sgd"]},
}


def asked(index, seed=0, space=SPACE):
    return AskInput(study="sweep-1", index=index, seed=seed, direction="max", space=space)


def trials(storage):
    return optuna.load_study(study_name="sweep-1", storage=storage).get_trials()


def test_ask_answers_each_type_in_its_range(storage):
    p = ask(storage, asked(0))
    assert 1e-5 <= p["algorithm.lr"] <= 1e-1
    assert 0.0 <= p["x"] <= 1.0
    assert p["n"] in (1, 2, 3, 4) and isinstance(p["n"], int)
    assert p["opt"] in ("adam", "sgd")


def test_a_retried_ask_answers_the_same_trial(storage):
    first = ask(storage, asked(3))
    again = ask(storage, asked(3))
    assert again == first
    assert len(trials(storage)) == 1
    assert trials(storage)[0].user_attrs["ragen.index"] == 3


def test_a_retried_tell_is_a_no_op(storage):
    ask(storage, asked(0))
    assert tell(storage, TellInput(study="sweep-1", index=0, state="complete", value=0.5)) == "complete"
    # The retry (even with another value) changes nothing.
    assert tell(storage, TellInput(study="sweep-1", index=0, state="complete", value=0.9)) == "complete"
    [t] = trials(storage)
    assert t.state == optuna.trial.TrialState.COMPLETE and t.value == 0.5


def test_a_pruned_child_is_told_pruned_with_its_rung_value(storage):
    ask(storage, asked(0))
    assert tell(storage, TellInput(study="sweep-1", index=0, state="pruned", value=0.2, step=10)) == "pruned"
    [t] = trials(storage)
    assert t.state == optuna.trial.TrialState.PRUNED
    assert t.intermediate_values == {10: 0.2}


def test_a_child_never_asked_is_not_told(storage):
    ask(storage, asked(0))
    assert tell(storage, TellInput(study="sweep-1", index=7, state="fail")) == "unknown"


def test_asks_are_reproducible_from_the_seed(tmp_path):
    def run(path, seed):
        s = f"sqlite:///{path}"
        out = []
        for i in range(4):
            p = ask(s, asked(i, seed))
            tell(s, TellInput(study="sweep-1", index=i, state="complete", value=p["x"]))
            out.append(p)
        return out

    assert run(tmp_path / "a.db", 1) == run(tmp_path / "b.db", 1)
    assert run(tmp_path / "c.db", 1) != run(tmp_path / "d.db", 2)
    # Fresh samplers per ask still draw distinct startup points.
    assert len({p["x"] for p in run(tmp_path / "e.db", 1)}) == 4


def test_tpe_moves_towards_the_optimum(storage):
    # Maximise -(log10 lr + 3)^2: the optimum is lr = 1e-3. After 10 random startup trials, TPE's
    # next 15 should sit closer to it than the startup ones did on average.
    space = {"algorithm.lr": {"logUniform": [1e-6, 1.0]}}
    dist = []
    for i in range(25):
        p = ask(storage, asked(i, 0, space))
        d = abs(math.log10(p["algorithm.lr"]) + 3)
        tell(storage, TellInput(study="sweep-1", index=i, state="complete", value=-(d**2)))
        dist.append(d)
    assert sum(dist[10:]) / 15 < sum(dist[:10]) / 10


def test_unknown_types_are_refused():
    with pytest.raises(ValueError, match="unknown parameter type"):
        distribution({"normal": [0, 1]})
