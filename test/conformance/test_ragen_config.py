"""Every command line the product builds for RAGEN's train.py, composed by RAGEN's real Hydra config.

For each argv of print-argvs.ts (train, resume, trainer validation, sweep children, an ASHA
promotion, a campaign attempt after `extend`, over nnodes 1/2/4 x nGpusPerNode 1/2/8): Hydra 1.3
composes it as train.py would (RAGEN's config/ and verl's config on the search path, RAGEN's three
resolvers registered) and RAGEN's start-up rules hold on the result. For each spec the product
refuses at load, RAGEN refuses its argvs for the same rules: the two agree both ways.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from conformance_data import RAGEN_CONFIG, VERL_CONFIG, product_argvs, require_conformance_dir
from ragen_preflight import broken_rules, group_split_problems

# RAGEN's _2_sokoban.yaml has no `_self_` in its defaults list; Hydra warns on every composition.
pytestmark = pytest.mark.filterwarnings("ignore:In '_2_sokoban'.*_self_:UserWarning")

ARGVS = product_argvs()
CASES = ARGVS["cases"]
ACCEPTED = [c for c in CASES if not c["refusedRules"]]
REFUSED_SPECS: dict[str, list[dict]] = defaultdict(list)
for c in CASES:
    if c["refusedRules"]:
        REFUSED_SPECS[c["name"].rsplit("/", 1)[0]].append(c)


def _register_resolvers() -> None:
    # The three train.py registers (ragen/utils.py register_resolvers), in the suite's own words.
    for name, fn in (
        ("mul", lambda x, y: x * y),
        ("int_div", lambda x, y: int(float(x) / float(y))),
        ("not", lambda x: not x),
    ):
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)


def split_argv(argv: list[str]) -> tuple[str, list[str]]:
    """`… --config-name NAME overrides…` → (NAME, overrides), as Hydra's command line reads it."""
    at = argv.index("--config-name")
    return argv[at + 1], argv[at + 2 :]


def compose_argv(conformance_dir, argv: list[str]):
    """RAGEN's config as train.py composes it from this argv, every interpolation resolved."""
    _register_resolvers()
    config_name, overrides = split_argv(argv)
    GlobalHydra.instance().clear()
    # train.py adds RAGEN's config dir and verl's; the verl package is not installed here, so its
    # config folder goes on the search path (replacing _2_sokoban.yaml's pkg://verl.trainer.config).
    searchpath = f"hydra.searchpath=[file://{conformance_dir / VERL_CONFIG}]"
    with initialize_config_dir(config_dir=str(conformance_dir / RAGEN_CONFIG), version_base=None):
        cfg = compose(config_name=config_name, overrides=[searchpath, *overrides])
    OmegaConf.resolve(cfg)
    return cfg


def test_the_matrix_covers_every_kind_of_command_line():
    names = [c["name"] for c in CASES]
    for nnodes in (1, 2, 4):
        for gpus in (1, 2, 8):
            for example in ("seed", "local-trainer"):
                for kind in ("train", "resume", "validate"):
                    assert f"{example}/n{nnodes}g{gpus}/{kind}" in names
    assert any(n.startswith("sweep/child-") and n.endswith("-promoted") for n in names)
    assert sum(n.startswith("sweep/child-") for n in names) >= 4
    assert any("attempt-2-extended" in n for n in names)


@pytest.mark.parametrize("case", ACCEPTED, ids=[c["name"] for c in ACCEPTED])
def test_ragen_composes_and_accepts(conformance_dir, case):
    assert case["refused"] == [], f"the product refuses a matrix spec at load: {case['refused']}"
    cfg = compose_argv(conformance_dir, case["argv"])
    assert broken_rules(cfg) == set(), " ".join(case["argv"])
    assert group_split_problems(cfg) == []
    _, overrides = split_argv(case["argv"])
    gpus = int(next(o for o in overrides if o.startswith("trainer.n_gpus_per_node=")).split("=")[1])
    assert cfg.trainer.n_gpus_per_node == gpus
    assert cfg.ray_kwargs.ray_init.address == "auto"
    if case["kind"] == "validate":
        assert cfg.trainer.val_only is True and cfg.trainer.val_before_train is True
        assert cfg.trainer.resume_mode == "resume_path"
    else:
        assert cfg.trainer.val_only is False
        assert cfg.trainer.resume_mode == ("resume_path" if case["kind"] == "resume" else "disable")


@pytest.mark.parametrize("spec", sorted(REFUSED_SPECS), ids=sorted(REFUSED_SPECS))
def test_what_the_product_refuses_ragen_refuses(conformance_dir, spec):
    cases = REFUSED_SPECS[spec]
    product = {rule for c in cases for rule in c["refusedRules"]}
    ragen: set[str] = set()
    for case in cases:
        try:
            cfg = compose_argv(conformance_dir, case["argv"])
        except ConfigCompositionException as err:
            assert "Ambiguous value" in str(err), str(err)
            ragen.add("hydra-ambiguous-value")
            continue
        ragen |= broken_rules(cfg)
    assert ragen == product, f"{spec}: RAGEN breaks {sorted(ragen)}, the product refuses {sorted(product)}"


def test_the_products_ragen_facts_match_the_real_config(conformance_dir):
    """RAGEN_PREFLIGHT_DEFAULTS and the 20daedc env tags (src/domain) against config/base.yaml and envs.yaml."""
    facts = ARGVS["ragen"]
    cfg = compose_argv(conformance_dir, ["python", "train.py", "--config-name", "_2_sokoban"])
    for key, value in facts["defaults"].items():
        assert OmegaConf.select(cfg, key) == value, key
    actor = cfg.actor_rollout_ref.actor
    assert actor.ppo_mini_batch_size == cfg.ppo_mini_batch_size
    assert actor.ppo_micro_batch_size_per_gpu == cfg.micro_batch_size_per_gpu
    assert list(cfg.custom_envs.keys()) == facts["envTags"]
    # The defaults alone pass every rule: the product's rules see what RAGEN sees.
    assert broken_rules(cfg) == set()


def test_a_missing_config_folder_fails_naming_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGEN_CONFORMANCE_DIR", str(tmp_path / "absent"))
    with pytest.raises(pytest.fail.Exception, match="RAGEN_CONFORMANCE_DIR"):
        require_conformance_dir()
