"""The registry of names and options, and the bad-input tests generated from it.

Every registered choice of every public entry point and every command-line flag gets an
unknown value; the error must name the argument (the flag on the command line) and list
every allowed value. The command line's ``choices`` must be the registry's.
"""

import argparse
import ast
import json
from pathlib import Path

import pytest

import perfci as pc
from perfci import harness
from perfci._core import registry
from perfci.cli import main
from perfci.cli.parser import build_parser
from perfci.harness import families, kinds

SRC = Path(pc.__file__).parent
BAD = "no-such-name"
Y = [1, 0, 1, 1, 0, 1, 1, 0]
P = [1, 0, 0, 1, 1, 1, 1, 0]
SCORES = [0.9, 0.2, 0.4, 0.8, 0.6, 0.7, 0.5, 0.3]

ALL_CHOICES = {
    name: value
    for module in (registry, families, kinds)
    for name, value in vars(module).items()
    if isinstance(value, registry.Choices)
}


# --------------------------------------------------------------- the registry itself


@pytest.mark.parametrize("name", sorted(ALL_CHOICES))
def test_every_name_has_one_line_of_help(name):
    choices = ALL_CHOICES[name]
    assert choices.help and "\n" not in choices.help
    assert len(set(choices.names)) == len(choices.names) > 0
    for entry in choices.entries:
        assert entry.help and "\n" not in entry.help, entry
        assert choices.help_of(entry.name) == entry.help
    for line, name_ in zip(choices.describe().splitlines(), choices.names, strict=False):
        assert line.split()[0] == name_


def test_check_returns_the_value_and_names_the_argument():
    assert registry.DESIGN.check("icc") == "icc"
    assert registry.DF_ADJUST.check(None) is None
    with pytest.raises(
        ValueError,
        match=(
            r"^`design` must be one of "
            r"\['cluster_robust', 'edge', 'icc', 'icc_weighted', 'persons'\]"
        ),
    ):
        registry.DESIGN.check(None)
    with pytest.raises(ValueError, match=r"^`--design` must be one of"):
        registry.DESIGN.check("anova", "--design")
    with pytest.raises(ValueError, match=r"or None; got 'x'\.$"):
        registry.DF_ADJUST.check("x")
    with pytest.raises(ValueError, match="not registered for `sampler`"):
        registry.SAMPLER.subset(["gibbs"])
    assert registry.EXACT_METHOD.check("pseudo_percentile_12") == "pseudo_percentile_12"
    assert "pseudo_percentile_x" not in registry.EXACT_METHOD
    assert 3 not in registry.METRIC


def test_metric_names_are_built_from_the_binary_ones():
    binary = registry.BINARY_METRIC.names
    assert registry.PROPORTION_METRIC.names == binary[:5]
    assert registry.METRIC.names == (
        binary
        + ("multiclass_accuracy", "multiclass_kappa")
        + tuple(f"macro_{m}" for m in binary)
        + tuple(f"micro_{m}" for m in binary)
    )
    assert registry.BOOTSTRAP_METRIC.names == ("proportion", *registry.METRIC.names)
    # the AUC of a score is no function of confusion counts: it extends the lists of
    # metric_ci/report and compare only, never METRIC (what counts-based code reads)
    assert registry.ANY_METRIC.names == (*registry.METRIC.names, "roc_auc")
    assert registry.COMPARE_METRIC.names == (*binary, "roc_auc")
    assert registry.METRIC_CI_AUC_METHOD.names == ("recommended", *registry.AUC_METHOD.names)
    assert tuple(pc.AUC_METHODS) == registry.AUC_METHOD.names


PUBLIC_CONSTANTS = [
    (pc.ANALYTIC_METHODS, registry.ANALYTIC_METHOD),
    (pc.BINARY_METRICS, registry.BINARY_METRIC),
    (pc.METRICS, registry.METRIC),
    (tuple(pc.PROPORTION_METRICS), registry.PROPORTION_METRIC),
    (pc.DESIGNS, registry.DESIGN),
    (pc.DF_ADJUSTMENTS, registry.DF_ADJUST),
    (pc.AGREEMENT_STATISTICS, registry.AGREEMENT_STATISTIC),
    (pc.AGREEMENT_METHODS, registry.AGREEMENT_METHOD),
    (pc.LEVELS_OF_MEASUREMENT, registry.LEVEL_OF_MEASUREMENT),
    # modules not yet reading the registry: their constants must agree with it
    (pc.SCHEMES, registry.BOOTSTRAP_SCHEME),
    (pc.BOOTSTRAP_INTERVALS, registry.BOOTSTRAP_INTERVAL),
    (pc.bayes.SAMPLERS, registry.SAMPLER),
    (pc.bayes.ESTIMANDS, registry.ESTIMAND),
    (pc.bayes.INTERVAL_KINDS, registry.CREDIBLE_INTERVAL),
]


@pytest.mark.parametrize(("constant", "choices"), PUBLIC_CONSTANTS)
def test_public_constants_are_the_registry(constant, choices):
    assert tuple(constant) == choices.names


def test_priors_are_the_registry():
    from perfci.models.beta_binomial import PRIORS

    assert tuple(PRIORS) == registry.PRIOR.names


def _imports(path: Path, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` blocks hold no runtime import
            continue
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or "").split(".")[0])
    return found


def test_core_is_numpy_only_and_the_registry_imports_no_perfci_module():
    assert _imports(SRC / "_core" / "registry.py", top_level_only=False) <= {
        "__future__",
        "re",
        "collections",
        "dataclasses",
        "typing",
    }
    for path in (SRC / "_core").glob("*.py"):
        top = _imports(path, top_level_only=True)
        assert not top & {"pandas", "xarray", "pymc", "pytensor", "nutpie", "arviz"}, (path, top)
        assert not {m for m in top if m.startswith("..")}, (path, top)


# -------------------------------------------------- harness families from the registry


def _spec(family: str, **options):
    spec = {"name": "m", "family": family}
    for option in families.HARNESS_FAMILIES[family].options:
        if option.default is families.REQUIRED and option.required_when is None:
            spec[option.name] = option.choices.names[0]
    spec.update(options)
    return spec


FAMILY_CHOICES = [
    (family.name, option.name, value)
    for family in families.HARNESS_FAMILIES.values()
    for option in family.options
    if option.choices is not None
    for value in option.choices.names
]


@pytest.mark.parametrize(("family", "option", "value"), FAMILY_CHOICES)
def test_harness_and_registry_accept_the_same_option_values(family, option, value):
    spec = _spec(family, **{option: value})
    if family == "bayes" and spec.get("sampler") == "nutpie":
        spec["replications"] = 2
    options = {k: v for k, v in spec.items() if k not in ("name", "family")}
    assert harness.schema._check_method(0, dict(spec)).options == families.check_family_options(
        family, options, "methods[0]"
    )
    bad = {**options, option: BAD}
    with pytest.raises(ValueError, match=rf"^`methods\[0\]\.{option}` must be one of") as err:
        families.check_family_options(family, bad, "methods[0]")
    for allowed in families.HARNESS_FAMILIES[family].option(option).choices.names:
        assert repr(allowed) in str(err.value)
    with pytest.raises(ValueError, match=rf"`methods\[0\]\.{option}`"):
        harness.schema._check_method(0, {"name": "m", "family": family, **bad})


def test_family_options_types_defaults_and_unknown_keys():
    assert families.check_family_options("clustered", {"method": "wilson"}) == {
        "method": "wilson",
        "design": "icc",
        "df_adjust": "none",
    }
    with pytest.raises(ValueError, match=r"`m.pseudo_count` must be an integer non-negative"):
        families.check_family_options("bootstrap", {"interval": "bca", "pseudo_count": -1}, "m")
    with pytest.raises(ValueError, match=r"`m.replications` \(the first K .*\) is needed for"):
        families.check_family_options("bayes", {"estimand": "mu", "sampler": "nutpie"}, "m")
    with pytest.raises(ValueError, match=r"`m` has unknown keys \['level'\]"):
        families.check_family_options("analytic", {"method": "wald", "level": 0.9}, "m")
    with pytest.raises(ValueError, match=r"`m.family` must be one of \['analytic', 'annotators',"):
        families.check_family_options("magic", {}, "m")
    with pytest.raises(ValueError, match=r"`m.scheme` must be one of \['iid'\] for a bernoulli"):
        kinds.check_family_support(
            "bernoulli", "bootstrap", {"scheme": "cluster", "interval": "bca"}, "m"
        )


# ---------------------------------------------- the suite schema, generated from the registry

# One valid suite of each population kind, as the dict a TOML file parses to.
_METHODS = {
    "bernoulli": [{"name": "wilson", "family": "analytic", "method": "wilson"}],
    "confusion": [{"name": "pct", "family": "bootstrap", "interval": "percentile"}],
    "nested_finite": [{"name": "wilson", "family": "analytic", "method": "wilson"}],
    "nested_planning": [{"name": "ac", "family": "clustered", "method": "agresti_coull"}],
    "nested": [{"name": "wilson", "family": "analytic", "method": "wilson"}],
    "nested_confusion": [
        {"name": "pct", "family": "bootstrap", "interval": "percentile", "scheme": "cluster"}
    ],
    "paired_nested": [{"name": "robust", "family": "comparison", "method": "cluster_robust"}],
    "subgroups_nested": [{"name": "rec", "family": "group_difference"}],
    "scored_nested": [{"name": "delong", "family": "auc", "method": "delong"}],
    "runs_nested": [{"name": "rec", "family": "runs"}],
    "annotators_nested": [{"name": "rec", "family": "annotators"}],
    "stratified_corpus": [{"name": "rec", "family": "weighted"}],
    "many_nested": [{"name": "rec", "family": "many"}],
    "cv_nested": [{"name": "rec", "family": "cv"}],
    "covariates_nested": [{"name": "rec", "family": "performance", "method": "unadjusted"}],
}
_POPULATIONS = {
    "bernoulli": {},
    "confusion": {"prevalence": 0.2},
    "nested_finite": {"persons": 50, "texts_per_person": 10, "mean": 0.9, "sd": 0.1, "seed": 3},
    "nested_planning": {"metric_value": 0.9},
    "nested": {"rate": 0.9},
    "nested_confusion": {"metric": "f1"},
    "paired_nested": {"metric": "recall"},
    "subgroups_nested": {"metric": "recall"},
    "scored_nested": {},
    "runs_nested": {"metric": "recall"},
    "annotators_nested": {"metric": "recall"},
    "stratified_corpus": {"metric": "recall", "persons": 20, "texts_per_person": 10.0},
    "many_nested": {"metric": "recall", "classifiers": 3},
    "cv_nested": {"metric": "recall"},
    "covariates_nested": {},
}
_GRIDS = {
    "bernoulli": {"n": [10, 20], "p": [0.5, 0.9]},
    "confusion": {"n": [30], "precision": [0.9], "recall": [0.8]},
    "nested_finite": {"sampling": ["small"], "persons": [5], "icc": [0.1]},
    "nested_planning": {"n": [100], "icc": [0.0, 0.1], "texts_per_person": [1, 2.5]},
    "nested": {"persons": [5], "texts_per_person": [3.0]},
    "nested_confusion": {"persons": [5], "texts_per_person": [5.0]},
    "paired_nested": {"persons": [5], "texts_per_person": [5.0]},
    "subgroups_nested": {"persons": [5], "texts_per_person": [5.0]},
    "scored_nested": {"persons": [5], "texts_per_person": [5.0]},
    "runs_nested": {"persons": [5], "texts_per_person": [5.0]},
    "annotators_nested": {"persons": [5], "texts_per_person": [5.0]},
    "stratified_corpus": {"sampled": [40], "positive_share": [0.5]},
    "many_nested": {"persons": [5], "texts_per_person": [5.0]},
    "cv_nested": {"persons": [10], "texts_per_person": [5.0]},
    "covariates_nested": {"persons": [10], "texts_per_person": [5.0]},
}


# A valid value of each dim that the base suites do not vary (2 fits the others).
_GOOD = {
    "folds": 5,
    "informative": 0.5,
    "icc": 0.1,
    "rate": 0.8,
    "prevalence": 0.2,
    "icc_prevalence": 0.1,
    "recall": 0.8,
    "specificity": 0.8,
    "recall_a": 0.8,
    "recall_b": 0.8,
    "specificity_a": 0.8,
    "specificity_b": 0.8,
    "agreement": 0.5,
    "metric": "kappa",
    "auc": 0.8,
    "score_icc": 0.3,
    "score_levels": 10,
    "runs": 3,
    "text_sd": 1.0,
    "person_sd": 0.5,
    "run_sd": 0.3,
    "annotators": 3,
    "annotator_accuracy": 0.9,
    "annotator_sd": 0.3,
    "coded": 0.6,
    "coding": "random",
    "coded_positive": 0.9,
    "classifiers": 3,
    "recall_step": 0.05,
    "sample_share": 0.8,
    "corpus_share": 0.3,
    "text_share": 0.5,
}


def _suite_dict(kind):
    exact = kind == "nested_planning"
    return {
        "name": "s",
        "description": "d",
        "seed": 1,
        "confidence_level": 0.95,
        "population": {"kind": kind, **_POPULATIONS[kind]},
        "grid": dict(_GRIDS[kind]),
        "scales": {"smoke": {"replications": 1 if exact else 5, "resamples": 40, "exact": exact}},
        "methods": [dict(m) for m in _METHODS[kind]],
    }


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(value), repr(value))
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _toml(suite):
    """Write a suite dict as TOML (scalars first, then its tables)."""
    tables = ("population", "grid", "scales", "methods")
    lines = [f"{k} = {_toml_value(v)}" for k, v in suite.items() if k not in tables]
    for table in ("population", "grid"):
        if isinstance(suite.get(table), dict):
            lines.append(f"[{table}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in suite[table].items()]
    for name, scale in suite.get("scales", {}).items():
        lines.append(f"[scales.{json.dumps(name)}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in scale.items()]
    for method in suite.get("methods", []):
        lines.append("[[methods]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in method.items()]
    return "\n".join(lines) + "\n"


def _load(tmp_path, suite):
    path = tmp_path / "gen.toml"
    path.write_text(_toml(suite))
    return harness.load_suite(path)


def _bad_values(field):
    """Values of the wrong type and, where the field has bounds, just outside them."""
    if field.type is bool:
        return [1, "true"]
    if field.type is str:
        bad = [3, True]
        if not field.empty:
            bad.append("")
        if field.choices is not None:
            bad.append(BAD)
        if field.pattern is not None:
            bad += ["../x", "/abs/x", "a/b", "a\\b", "..", ".hidden", "x" * 101, "na me"]
        return bad
    bad = ["1", True, float("nan"), float("inf")]
    if field.type is int:
        bad.append(1.5)
        bad.append(float(field.minimum if field.minimum is not None else 1))  # 10.0 is no int
    lo, hi = field.minimum, field.maximum
    if lo is not None:
        bad.append(lo if field.open_minimum else lo - 1)
    if hi is not None:
        bad.append(hi if field.open_maximum else hi + 1)
    return bad


SCHEMA_CASES = [
    # (kind, where in the suite dict, key in messages, the field)
    *(("bernoulli", (), name, f) for name, f in harness.schema.SUITE_KEYS.items()),
    *(
        ("bernoulli", ("scales", "smoke"), f"scales.smoke.{n}", f)
        for n, f in harness.schema.SCALE_KEYS.items()
    ),
    *(
        (kind, ("population",), f"population.{name}", f)
        for kind, schema in kinds.POPULATION_SCHEMA.items()
        for name, f in schema.keys.items()
    ),
]
DIM_CASES = [
    (kind, name, f)
    for kind, schema in kinds.POPULATION_SCHEMA.items()
    for name, f in schema.dims.items()
]


@pytest.mark.parametrize(
    ("kind", "where", "key", "field"), SCHEMA_CASES, ids=[f"{c[0]}-{c[2]}" for c in SCHEMA_CASES]
)
def test_every_suite_key_refuses_a_wrong_type_or_range_naming_the_key_and_file(
    tmp_path, kind, where, key, field
):
    assert _load(tmp_path, _suite_dict(kind))  # the base suite is valid
    for bad in _bad_values(field):
        suite = _suite_dict(kind)
        table = suite
        for part in where:
            table = table[part]
        table[field.name] = bad
        with pytest.raises(ValueError) as err:
            _load(tmp_path, suite)
        message = str(err.value)
        assert message.startswith(f"suite gen.toml: `{key}` must be "), (bad, message)
        assert field.describe() in message or "at least 1: the scale" in message, message
    if field.required:
        suite = _suite_dict(kind)
        table = suite
        for part in where:
            table = table[part]
        del table[field.name]
        with pytest.raises(ValueError, match=rf"^suite gen.toml: `{key}` is missing"):
            _load(tmp_path, suite)


@pytest.mark.parametrize(
    ("kind", "dim", "field"), DIM_CASES, ids=[f"{c[0]}-{c[1]}" for c in DIM_CASES]
)
def test_every_grid_dim_refuses_bad_and_repeated_values_naming_the_dim_and_file(
    tmp_path, kind, dim, field
):
    for bad in _bad_values(field):
        suite = _suite_dict(kind)
        suite["grid"][dim] = [*_GRIDS[kind].get(dim, [_GOOD.get(dim, 2)])[:1], bad]
        with pytest.raises(ValueError) as err:
            _load(tmp_path, suite)
        assert str(err.value) == (
            f"suite gen.toml: `grid.{dim}` values must each be {field.describe()}; got {bad!r}."
        )
        suite = _suite_dict(kind)
        suite["scales"]["smoke"]["grid"] = {dim: [bad]}
        if dim in suite["grid"]:
            with pytest.raises(ValueError, match=rf"^suite gen.toml: `scales.smoke.grid.{dim}`"):
                _load(tmp_path, suite)
    if dim in _GRIDS[kind]:
        suite = _suite_dict(kind)
        value = _GRIDS[kind][dim][0]
        suite["grid"][dim] = [value, value]
        with pytest.raises(ValueError) as err:
            _load(tmp_path, suite)
        assert str(err.value) == (
            f"suite gen.toml: `grid.{dim}` must not repeat a value (each is one cell); "
            f"{value!r} is repeated."
        )


@pytest.mark.parametrize("kind", sorted(kinds.POPULATION_SCHEMA))
def test_unknown_keys_are_refused_at_every_level(tmp_path, kind):
    places = {
        (): "the top level",
        ("population",): "`population`",
        ("scales", "smoke"): "`scales.smoke`",
        ("methods", 0): "`methods[0]`",
    }
    for where, named in places.items():
        suite = _suite_dict(kind)
        table = suite
        for part in where:
            table = table[part]
        table["colour"] = "blue"
        with pytest.raises(ValueError) as err:
            _load(tmp_path, suite)
        assert str(err.value).startswith(f"suite gen.toml: {named} has unknown keys ['colour']")
    for key in ("grid", "scales.smoke.grid"):
        suite = _suite_dict(kind)
        if key == "grid":
            suite["grid"]["colour"] = [1]
        else:
            suite["scales"]["smoke"]["grid"] = {"colour": [1]}
        with pytest.raises(
            ValueError, match=rf"^suite gen.toml: `{key}` has unknown dims \['colour'\]"
        ):
            _load(tmp_path, suite)


def test_the_schema_is_the_registry():
    from perfci.harness.populations import SAMPLINGS

    assert set(kinds.HARNESS_SAMPLING.names) == {*SAMPLINGS, "srs"}
    assert set(kinds.POPULATION_SCHEMA) == set(kinds.HARNESS_POPULATION.names)
    assert set(kinds.POPULATION_SCHEMA) == set(kinds.POPULATION_SUPPORT)
    for kind, schema in kinds.POPULATION_SCHEMA.items():
        for field in (*schema.keys.values(), *schema.dims.values()):
            assert field.help and "\n" not in field.help, (kind, field)
    for field in (*harness.schema.SUITE_KEYS.values(), *harness.schema.SCALE_KEYS.values()):
        assert field.help and "\n" not in field.help, field
        if not field.required:
            assert field.accepts(field.default), field


def test_the_documented_suite_rules_are_the_registry():
    text = (SRC.parents[1] / "docs" / "validation.md").read_text()
    rows = [f"| `{k}` | {f.describe()} |" for k, f in harness.schema.SUITE_KEYS.items()]
    rows += [
        f"| `scales.NAME.{k}` | {f.describe()} |" for k, f in harness.schema.SCALE_KEYS.items()
    ]
    for kind, schema in kinds.POPULATION_SCHEMA.items():
        rows += [
            f"| `{kind}` | `population.{k}` | {f.describe()} |" for k, f in schema.keys.items()
        ]
        rows += [f"| `{kind}` | `grid.{k}` | {f.describe()} |" for k, f in schema.dims.items()]
    for row in rows:
        assert row in text, row
    start = text.index("(validation-schema)=")
    section = text[start : text.index("Besides these:", start)]
    # and no row the registry does not have (one more: the header "| `population.kind` |")
    assert section.count("\n| `") == len(rows) + 1


# ------------------------------------------------ generated bad input: Python entry points

GROUPED = ([3, 2, 4], [5, 5, 6])
CODES = [[y, p] for y, p in zip(Y, P, strict=True)]  # two annotators' codes
PYTHON_CASES = [
    # (function, positional args, keyword taking the bad value, its choices, argument name)
    (pc.proportion_ci, (1, 10), "method", registry.ANALYTIC_METHOD),
    (pc.clustered_proportion_ci, GROUPED, "method", registry.ANALYTIC_METHOD),
    (pc.clustered_proportion_ci, GROUPED, "design", registry.DESIGN),
    (pc.clustered_proportion_ci, GROUPED, "df_adjust", registry.DF_ADJUST),
    (pc.design_effect, GROUPED, "design", registry.DESIGN),
    (pc.effective_sample_size, (100,), "df_adjust", registry.DF_ADJUST),
    (pc.compute_metric, ([1, 2, 3, 4],), "metric", registry.METRIC),
    (pc.proportion_counts, ([1, 2, 3, 4],), "metric", registry.PROPORTION_METRIC),
    (pc.exact_coverage, (), "method", registry.EXACT_METHOD),
    (pc.expected_half_width, (), "method", registry.EXACT_METHOD),
    (pc.operating_characteristics, (), "method", registry.EXACT_METHOD),
    (pc.plan_sample_size, (0.9, 0.05), "method", registry.PLAN_METHOD),
    (pc.metric_ci, (Y, P, "recall"), "method", registry.METRIC_CI_METHOD),
    (pc.metric_ci, (Y, P), "metric", registry.ANY_METRIC),
    (pc.metric_ci, (Y, SCORES, "roc_auc"), "method", registry.METRIC_CI_AUC_METHOD),
    (pc.auc_ci, (Y, SCORES), "method", registry.AUC_METHOD),
    (pc.auc_ci, (Y, SCORES), "scheme", registry.BOOTSTRAP_SCHEME),
    (pc.auc_ci, (Y, SCORES), "interval", registry.BOOTSTRAP_INTERVAL),
    (pc.compare_auc, (Y, SCORES, SCORES), "method", registry.COMPARE_AUC_METHOD),
    (pc.compare, (Y, SCORES, SCORES, "roc_auc"), "method", registry.COMPARE_AUC_METHOD),
    (pc.metric_ci, (Y, P, "recall"), "design", registry.DESIGN),
    (pc.metric_ci, (Y, P, "recall"), "df_adjust", registry.DF_ADJUST),
    (pc.metric_ci, (Y, P, "f1"), "scheme", registry.BOOTSTRAP_SCHEME),
    (pc.metric_ci, (Y, P, "f1"), "interval", registry.BOOTSTRAP_INTERVAL),
    (pc.report, (Y, P), "design", registry.DESIGN),
    (pc.report, (Y, P), "df_adjust", registry.DF_ADJUST),
    (pc.bootstrap_ci, ([5, 1],), "metric", registry.BOOTSTRAP_METRIC),
    (pc.bootstrap_ci, ([5, 1], "proportion"), "scheme", registry.BOOTSTRAP_SCHEME),
    (pc.bootstrap_ci, ([5, 1], "proportion"), "interval", registry.BOOTSTRAP_INTERVAL),
    (pc.compare, (Y, P, P), "metric", registry.COMPARE_METRIC),
    (pc.compare, (Y, P, P, "recall"), "method", registry.COMPARE_METHOD),
    (pc.compare, (Y, P, P, "recall"), "scheme", registry.BOOTSTRAP_SCHEME),
    (pc.compare, (Y, P, P, "recall"), "interval", registry.BOOTSTRAP_INTERVAL),
    (pc.compare_groups, (Y, P), "metric", registry.BINARY_METRIC),
    (pc.compare_groups, (Y, P, "recall"), "method", registry.GROUP_METHOD),
    (pc.compare_groups, (Y, P, "recall"), "simultaneous", registry.SIMULTANEOUS),
    (pc.annotator_agreement, (CODES,), "statistic", registry.AGREEMENT_STATISTIC),
    (pc.annotator_agreement, (CODES,), "method", registry.AGREEMENT_METHOD),
    (pc.annotator_agreement, (CODES,), "level_of_measurement", registry.LEVEL_OF_MEASUREMENT),
    (pc.annotator_agreement, (CODES,), "scheme", registry.BOOTSTRAP_SCHEME),
    (pc.annotator_agreement, (CODES,), "interval", registry.BOOTSTRAP_INTERVAL),
    (pc.agreement_report, (CODES, P), "method", registry.AGREEMENT_METHOD),
    (pc.agreement_report, (CODES, P), "scheme", registry.BOOTSTRAP_SCHEME),
    (pc.bayes.fit_proportion_counts, GROUPED, "sampler", registry.SAMPLER),
    (pc.bayes.fit_proportion_counts, GROUPED, "prior", registry.PRIOR),
]
EXTRA_KWARGS = {
    pc.exact_coverage: {"n": 10, "p": 0.5},
    pc.expected_half_width: {"n": 10, "p": 0.5},
    pc.operating_characteristics: {"n": 10, "p": 0.5},
    pc.effective_sample_size: {"icc": 0.1, "mean_cluster_size": 5},
    pc.bayes.fit_proportion_counts: {"sampler": "grid"},
    pc.compare_groups: {"by": ["a"] * 4 + ["b"] * 4},
}


@pytest.mark.parametrize(
    ("function", "args", "keyword", "choices"),
    PYTHON_CASES,
    ids=[f"{c[0].__name__}-{c[2]}" for c in PYTHON_CASES],
)
def test_unknown_names_raise_naming_the_argument_and_listing_the_allowed(
    function, args, keyword, choices
):
    kwargs = {**EXTRA_KWARGS.get(function, {}), keyword: BAD}
    with pytest.raises(ValueError) as err:
        function(*args, **kwargs)
    message = str(err.value)
    assert message.startswith(f"`{keyword}` must be one of"), message
    for name in choices.names:
        assert repr(name) in message, (name, message)
    for pattern in choices.patterns:
        assert repr(pattern.template) in message
    if choices.allow_none:
        assert "None" in message


def test_report_names_metrics_and_bayes_sampler():
    with pytest.raises(ValueError, match=r"^`metrics` must be one of \['accuracy'"):
        pc.report(Y, P, metrics=["recall", BAD])
    with pytest.raises(
        ValueError, match=r"^`bayes_sampler` must be one of \['auto', 'grid', 'nutpie'"
    ):
        pc.report(Y, P, bayes=True, bayes_sampler=BAD)


# ------------------------------------------------------------- the command line

CLI_CHOICES = {
    ("interval", "--method"): registry.ANALYTIC_METHOD,
    ("coverage", "--method"): registry.EXACT_METHOD,
    ("bootstrap", "--metric"): registry.BOOTSTRAP_METRIC,
    ("bootstrap", "--interval"): registry.BOOTSTRAP_INTERVAL,
    ("report", "--format"): registry.OUTPUT_FORMAT,
    ("compare", "--metric"): registry.COMPARE_METRIC,
    ("compare", "--method"): registry.COMPARE_METHOD,
    ("compare", "--adjust"): registry.MANY_ADJUST,
    ("rank", "--metric"): registry.BINARY_METRIC,
    ("rank", "--format"): registry.OUTPUT_FORMAT,
    ("bayes", "--metric"): registry.PROPORTION_METRIC,
    ("bayes", "--sampler"): registry.SAMPLER,
    ("bayes", "--prior"): registry.PRIOR,
    ("bayes", "--estimand"): registry.ESTIMAND.subset(("population", "mu", "sampled_persons")),
    ("report", "--bayes-sampler"): registry.SAMPLER,
    ("validate", "action"): registry.VALIDATE_ACTION,
    ("plan", "--method"): registry.PLAN_METHOD,
    ("plan", "--metric"): registry.PROPORTION_METRIC,
}
BASE_ARGV = {
    "interval": ["--successes", "1", "--trials", "10"],
    "coverage": ["--n", "10", "--p", "0.5"],
    "bootstrap": ["--cells", "1", "2", "3", "4"],
    "report": ["texts.csv", "--truth", "human", "--pred", "model"],
    "compare": ["texts.csv", "--truth", "h", "--pred-a", "a", "--pred-b", "b"],
    "rank": ["texts.csv", "--truth", "h", "--pred", "a", "b"],
    "bayes": ["texts.csv", "--truth", "h", "--pred", "m", "--group", "g", "--metric", "recall"],
    "validate": [],
    "plan": ["--metric-value", "0.9", "--half-width", "0.05"],
}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _flag(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest


def test_cli_choices_are_the_registry():
    found = {}
    for command, p in _subparsers().items():
        for action in p._actions:
            if action.choices is not None:
                found[(command, _flag(action))] = list(action.choices)
    assert set(found) == set(CLI_CHOICES)
    for key, choices in CLI_CHOICES.items():
        expected = [*choices.names, *(p.template for p in choices.patterns)]
        assert found[key] == expected, key
    assert "pseudo_percentile_7" in next(
        a.choices for a in _subparsers()["coverage"]._actions if _flag(a) == "--method"
    )


def test_every_cli_option_has_help_and_registered_ones_the_registry_help():
    parser = build_parser()
    for action in parser._actions:
        assert action.help, _flag(action)
    for command, p in _subparsers().items():
        assert p.description, command
        for action in p._actions:
            assert action.help and action.help != argparse.SUPPRESS, (command, _flag(action))
            choices = CLI_CHOICES.get((command, _flag(action)))
            if choices is not None:
                assert action.help.startswith(choices.help), (command, _flag(action))


@pytest.mark.parametrize(("command", "flag"), sorted(CLI_CHOICES))
def test_cli_unknown_names_exit_2_with_one_line_naming_the_flag(capsys, command, flag):
    argv = [command, BAD] if flag == "action" else [command, *BASE_ARGV[command], flag, BAD]
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"argument {flag}: invalid choice: {BAD!r}" in err, err
    choices = CLI_CHOICES[(command, flag)]
    for name in (*choices.names, *(p.template for p in choices.patterns)):
        assert repr(name) in err, (name, err)


def test_cli_debug_shows_the_traceback(capsys):
    argv = ["interval", "--successes", "11", "--trials", "10"]
    assert main(argv) == 2
    assert capsys.readouterr().err == "perfci: error: `--successes` must not exceed `--trials`.\n"
    for debug in (["--debug", *argv], [*argv, "--debug"]):
        assert main(debug) == 2
        err = capsys.readouterr().err
        assert err.startswith("Traceback") and err.endswith("`x` must not exceed `n`.\n")


def test_cli_registered_help_is_shown(capsys):
    with pytest.raises(SystemExit):
        main(["coverage", "--help"])
    out = capsys.readouterr().out
    for name in registry.EXACT_METHOD.names:
        assert f"  {name} " in out
        assert registry.EXACT_METHOD.help_of(name) in " ".join(out.split())
    assert "pseudo_percentile_<lambda>" in out


def test_cli_json_is_the_results_to_dict(capsys):
    assert main(["interval", "--successes", "0", "--trials", "7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == pc.proportion_ci(0, 7).to_dict()
    assert main(["plan", "--metric-value", "0.9", "--half-width", "0.05", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == pc.plan_sample_size(0.9, 0.05).to_dict()
    assert main(["coverage", "--method", "pseudo_percentile_2", "--n", "9", "--p", "1"]) == 0
    assert "pseudo_percentile_2 at n = 9" in capsys.readouterr().out
