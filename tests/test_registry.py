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

SRC = Path(pc.__file__).parent
BAD = "no-such-name"
Y = [1, 0, 1, 1, 0, 1, 1, 0]
P = [1, 0, 0, 1, 1, 1, 1, 0]

ALL_CHOICES = {
    name: value for name, value in vars(registry).items() if isinstance(value, registry.Choices)
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
    with pytest.raises(ValueError, match=r"^`design` must be one of \['cluster_robust', 'icc'\]"):
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
        binary + tuple(f"macro_{m}" for m in binary) + tuple(f"micro_{m}" for m in binary)
    )
    assert registry.BOOTSTRAP_METRIC.names == ("proportion", *registry.METRIC.names)


PUBLIC_CONSTANTS = [
    (pc.ANALYTIC_METHODS, registry.ANALYTIC_METHOD),
    (pc.BINARY_METRICS, registry.BINARY_METRIC),
    (pc.METRICS, registry.METRIC),
    (tuple(pc.PROPORTION_METRICS), registry.PROPORTION_METRIC),
    (pc.DESIGNS, registry.DESIGN),
    (pc.DF_ADJUSTMENTS, registry.DF_ADJUST),
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
    for option in registry.HARNESS_FAMILIES[family].options:
        if option.default is registry.REQUIRED and option.required_when is None:
            spec[option.name] = option.choices.names[0]
    spec.update(options)
    return spec


FAMILY_CHOICES = [
    (family.name, option.name, value)
    for family in registry.HARNESS_FAMILIES.values()
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
    assert harness.schema._check_method(0, dict(spec)).options == registry.check_family_options(
        family, options, "methods[0]"
    )
    bad = {**options, option: BAD}
    with pytest.raises(ValueError, match=rf"^`methods\[0\]\.{option}` must be one of") as err:
        registry.check_family_options(family, bad, "methods[0]")
    for allowed in registry.HARNESS_FAMILIES[family].option(option).choices.names:
        assert repr(allowed) in str(err.value)
    with pytest.raises(ValueError, match=rf"`methods\[0\]\.{option}`"):
        harness.schema._check_method(0, {"name": "m", "family": family, **bad})


def test_family_options_types_defaults_and_unknown_keys():
    assert registry.check_family_options("clustered", {"method": "wilson"}) == {
        "method": "wilson",
        "design": "icc",
        "df_adjust": "none",
    }
    with pytest.raises(ValueError, match=r"`m.pseudo_count` must be an integer non-negative"):
        registry.check_family_options("bootstrap", {"interval": "bca", "pseudo_count": -1}, "m")
    with pytest.raises(ValueError, match=r"`m.replications` \(the first K .*\) is needed for"):
        registry.check_family_options("bayes", {"estimand": "mu", "sampler": "nutpie"}, "m")
    with pytest.raises(ValueError, match=r"`m` has unknown keys \['level'\]"):
        registry.check_family_options("analytic", {"method": "wald", "level": 0.9}, "m")
    with pytest.raises(ValueError, match=r"`m.family` must be one of \['analytic', 'bayes'"):
        registry.check_family_options("magic", {}, "m")
    with pytest.raises(ValueError, match=r"`m.scheme` must be one of \['iid'\] for a bernoulli"):
        registry.check_family_support(
            "bernoulli", "bootstrap", {"scheme": "cluster", "interval": "bca"}, "m"
        )


# ------------------------------------------------ generated bad input: Python entry points

GROUPED = ([3, 2, 4], [5, 5, 6])
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
    (pc.metric_ci, (Y, P), "metric", registry.METRIC),
    (pc.metric_ci, (Y, P, "recall"), "design", registry.DESIGN),
    (pc.metric_ci, (Y, P, "recall"), "df_adjust", registry.DF_ADJUST),
    (pc.metric_ci, (Y, P, "f1"), "scheme", registry.BOOTSTRAP_SCHEME),
    (pc.metric_ci, (Y, P, "f1"), "interval", registry.BOOTSTRAP_INTERVAL),
    (pc.report, (Y, P), "design", registry.DESIGN),
    (pc.report, (Y, P), "df_adjust", registry.DF_ADJUST),
    (pc.bootstrap_ci, ([5, 1],), "metric", registry.BOOTSTRAP_METRIC),
    (pc.bootstrap_ci, ([5, 1], "proportion"), "scheme", registry.BOOTSTRAP_SCHEME),
    (pc.bootstrap_ci, ([5, 1], "proportion"), "interval", registry.BOOTSTRAP_INTERVAL),
    (pc.compare, (Y, P, P), "metric", registry.BINARY_METRIC),
    (pc.compare, (Y, P, P, "recall"), "scheme", registry.BOOTSTRAP_SCHEME),
    (pc.compare, (Y, P, P, "recall"), "interval", registry.BOOTSTRAP_INTERVAL),
    (pc.bayes.fit, GROUPED, "sampler", registry.SAMPLER),
    (pc.bayes.fit, GROUPED, "prior", registry.PRIOR),
]
EXTRA_KWARGS = {
    pc.exact_coverage: {"n": 10, "p": 0.5},
    pc.expected_half_width: {"n": 10, "p": 0.5},
    pc.operating_characteristics: {"n": 10, "p": 0.5},
    pc.effective_sample_size: {"icc": 0.1, "mean_cluster_size": 5},
    pc.bayes.fit: {"sampler": "grid"},
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
    with pytest.raises(ValueError, match=r"^`bayes_sampler` must be one of \['grid', 'nutpie'"):
        pc.report(Y, P, bayes=True, bayes_sampler=BAD)


# ------------------------------------------------------------- the command line

CLI_CHOICES = {
    ("interval", "--method"): registry.ANALYTIC_METHOD,
    ("coverage", "--method"): registry.EXACT_METHOD,
    ("bootstrap", "--metric"): registry.BOOTSTRAP_METRIC,
    ("bootstrap", "--interval"): registry.BOOTSTRAP_INTERVAL,
    ("report", "--format"): registry.OUTPUT_FORMAT,
    ("compare", "--metric"): registry.BINARY_METRIC,
    ("bayes", "--metric"): registry.PROPORTION_METRIC,
    ("bayes", "--sampler"): registry.SAMPLER,
    ("validate", "action"): registry.VALIDATE_ACTION,
    ("plan", "--method"): registry.PLAN_METHOD,
}
BASE_ARGV = {
    "interval": ["--successes", "1", "--trials", "10"],
    "coverage": ["--n", "10", "--p", "0.5"],
    "bootstrap": ["--cells", "1", "2", "3", "4"],
    "report": ["texts.csv", "--truth", "human", "--pred", "model"],
    "compare": ["texts.csv", "--truth", "h", "--pred-a", "a", "--pred-b", "b"],
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
