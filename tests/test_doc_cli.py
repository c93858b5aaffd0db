"""Every command line in README.md and docs/*.md runs, and prints what the page shows.

The rules, so that a page author knows what is checked:

- A *command line* is, in a fenced block, a line ``$ perfci ...`` (or
  ``$ .venv/bin/perfci ...``), or in a block without any ``$`` prompt a line that starts
  with ``perfci``. Other prompts (``$ make``, ``$ python``, ``$ pip``) are not run: the files
  they make are already in the working folder (below).
- The *shown output* of a command is the lines after it, up to the next prompt or the end
  of the block. It is compared with what the command writes to stdout and stderr, with
  runs of whitespace made one space; ``...`` matches anything, as in a doctest; numbers
  must be equal as written, except that a float written with 10 or more significant
  digits (JSON) may differ from it by 1e-9 relative (the last digits of a sum can depend
  on the CPU). A command without shown output is only run. Paths are relative (a test
  writes only inside its folder) and nothing runs in the background (``&``).
- The *exit status* must be 2 when the shown output ends in a ``perfci: error:`` line,
  1 when it ends in ``perfci: internal error:``, and 0 otherwise.
- ``<!-- cli: skip REASON -->`` on the line before a block: its commands are not run,
  for what cannot be shown in a test (a killed run, a full disk); the reason is written
  for the reader of the page source. Keep them rare.

Pages with commands that take seconds (Dask workers, drawing figures) are marked
``slow``. Each page runs in order in its own working folder, holding the bundled example data as
``texts.csv``, ``example_texts.csv`` and, delimited by semicolons,
``texts_semicolons.csv``, and its repeated runs as a long table ``runs_long.csv`` (as
docs/sources.md says), through :func:`perfci.cli.main` in this
process; a line with a shell pipe runs in a shell, with this environment's ``perfci``
first on the ``PATH``. Help is formatted at 80 columns (``COLUMNS=80``).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import perfci as pc
from perfci.cli import main
from perfci.cli.parser import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\S*)")
PROMPT = "$ "
COMMAND = re.compile(r"^(?:\.venv/bin/)?perfci(?:\s|$)")
SKIP = re.compile(r"<!--\s*cli:\s*skip\s+(.+?)\s*-->")
#: Fenced blocks that hold Python, TOML or file trees, never a command line.
NOT_SHELL = {"pycon", "python", "py", "toml", "text", "{math}", "{toctree}", "{eval-rst}"}
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass
class Command:
    """One command line of a page, with the output the page shows for it."""

    page: str
    line: int
    text: str
    shown: list[str] = field(default_factory=list)
    skip: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def status(self) -> int:
        """The exit status the shown output implies."""
        last = self.shown[-1] if self.shown else ""
        if last.startswith("perfci: internal error:"):
            return 1
        return 2 if last.startswith("perfci: error:") else 0


def commands_of(path: Path) -> list[Command]:
    """Return the command lines of a Markdown page, in order, with their shown output."""
    lines = path.read_text().splitlines()
    found: list[Command] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        marker, info = fence.groups()
        before = lines[i - 1] if i else ""
        skip = SKIP.search(before)
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith(marker):
            end += 1
        if info not in NOT_SHELL:
            block = lines[start:end]
            found += _block_commands(path.name, start + 1, block, skip and skip.group(1))
        i = end + 1
    return found


def _block_commands(page: str, first: int, block: list[str], skip: str | None) -> list[Command]:
    prompted = any(line.startswith(PROMPT) for line in block)
    found: list[Command] = []
    current: Command | None = None
    for offset, line in enumerate(block):
        if prompted and line.startswith(PROMPT):
            text = line[len(PROMPT) :]
            current = Command(page, first + offset, text, skip=skip)
            if COMMAND.match(text):
                found.append(current)
        elif prompted:
            if current is not None:
                current.shown.append(line)
        elif COMMAND.match(line):
            found.append(Command(page, first + offset, line, skip=skip))
    for command in found:
        while command.shown and not command.shown[-1].strip():
            command.shown.pop()
    return found


def _pattern(shown: str) -> tuple[re.Pattern[str], list[str]]:
    """A regex of the shown output (numbers as groups, ``...`` as anything)."""
    numbers: list[str] = []
    parts = []
    for piece in re.split(r"(\.\.\.)", shown):
        if piece == "...":
            parts.append(".*?")
            continue
        position = 0
        for match in NUMBER.finditer(piece):
            parts.append(re.escape(piece[position : match.start()]))
            parts.append(f"({NUMBER.pattern})")
            numbers.append(match.group())
            position = match.end()
        parts.append(re.escape(piece[position:]))
    return re.compile("".join(parts), re.DOTALL), numbers


def _same_number(written: str, printed: str) -> bool:
    if written == printed:
        return True
    digits = len(written.replace(".", "").lstrip("0").split("e")[0].split("E")[0])
    if "." not in written or digits < 10:
        return False
    return math.isclose(float(written), float(printed), rel_tol=1e-9, abs_tol=1e-15)


def _normal(text: str) -> str:
    return " ".join(text.split())


def output_matches(shown: list[str], printed: str) -> bool:
    """Whether printed output matches the shown lines, by the rules above."""
    pattern, numbers = _pattern(_normal("\n".join(shown)))
    match = pattern.fullmatch(_normal(printed))
    return match is not None and all(
        _same_number(w, p) for w, p in zip(numbers, match.groups(), strict=True)
    )


def run_command(command: Command) -> tuple[int, str]:
    """Run a command line in the working folder; return its status and its output."""
    argv = shlex.split(command.text, comments=True)
    # A test writes only inside its own folder, and waits for what it starts.
    assert "&" not in argv, f"{command.where}: a command in the background cannot be checked"
    outside = [a for a in argv if a.startswith("/")]
    assert not outside, f"{command.where}: {outside} is outside the working folder"
    if "|" in argv:
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        proc = subprocess.run(
            command.text, shell=True, capture_output=True, text=True, env=env, check=False
        )
        return proc.returncode, proc.stdout + proc.stderr
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            status = main(argv[1:])
        except SystemExit as exc:  # --help
            status = exc.code if isinstance(exc.code, int) else 0
    return status, out.getvalue()


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working folder with the example data files the pages use."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    texts = pc.load_example()
    texts.to_csv("texts.csv", index=False)
    texts.to_csv("example_texts.csv", index=False)
    texts.to_csv("texts_semicolons.csv", sep=";", index=False)
    texts.melt(
        id_vars=["text_id", "person", "human"],
        value_vars=["run1", "run2", "run3"],
        var_name="run",
        value_name="label",
    ).to_csv("runs_long.csv", index=False)
    _stratified_sample().to_csv("stratified_sample.csv", index=False)
    # the performance model's target: the corpus's mix of the sites' reference positives
    pd.DataFrame({"site": ["clinic_a", "clinic_b"], "weight": [0.7, 0.3]}).to_csv(
        "corpus_mix.csv", index=False
    )
    return tmp_path


def _stratified_sample() -> pd.DataFrame:
    """The sampling page's file: 300 coded predicted positives and 300 predicted negatives."""
    rng = np.random.default_rng(20261203)
    model = np.repeat([1, 0], 300)
    human = np.where(model == 1, rng.random(600) < 0.8, rng.random(600) < 0.02).astype(int)
    return pd.DataFrame(
        {
            "text_id": np.arange(1, 601),
            "human": human,
            "model": model,
            "model_b": np.where(rng.random(600) < 0.05, 1 - model, model),
            "stratum": np.where(model == 1, "predicted positive", "predicted negative"),
            "stratum_texts": np.where(model == 1, 2700, 30300),
        }
    )


COMMANDS = {page.name: commands_of(page) for page in PAGES}
#: Commands that take seconds (Dask workers, drawing figures): their pages are `slow`.
SLOW = re.compile(r"perfci validate (report|run .*--workers)")


def _page_params() -> list:
    params = []
    for page, found in COMMANDS.items():
        slow = any(SLOW.search(c.text) and not c.skip for c in found)
        if found:
            params.append(pytest.param(page, marks=[pytest.mark.slow] if slow else []))
    return params


@pytest.mark.parametrize("page", _page_params())
def test_every_command_line_of_a_page_runs_as_shown(page, workdir):
    failures = []
    for command in COMMANDS[page]:
        if command.skip:
            continue
        status, printed = run_command(command)
        if status != command.status:
            failures.append(f"{command.where}: exit status {status}, not {command.status}")
        elif command.shown and not output_matches(command.shown, printed):
            failures.append(
                f"{command.where}: {command.text}\n--- shown:\n"
                + "\n".join(command.shown)
                + f"\n--- printed:\n{printed}"
            )
    assert not failures, "\n\n".join(failures)


def test_the_pages_have_command_lines_and_few_skips():
    found = [c for commands in COMMANDS.values() for c in commands]
    assert len(found) > 50
    assert {"README.md", "install.md", "quickstart.md", "validation.md"} <= {c.page for c in found}
    skipped = [c for c in found if c.skip]
    assert len(skipped) <= 0.15 * len(found), [c.where for c in skipped]


def test_the_collector_reads_prompts_output_and_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Text `perfci demo` in prose is not run.\n\n"
        "```console\n$ python -c 'make a file'\n$ perfci interval --successes 1 --trials 2\n"
        "agresti_coull 95% interval ...\n\n$ perfci nonsense\nperfci: error: ...\n```\n\n"
        "```\nperfci demo   # a comment\nmake test\n```\n\n"
        "<!-- cli: skip it needs a full disk -->\n```console\n$ perfci validate run x\n```\n\n"
        "```pycon\n>>> perfci = 1\nperfci demo\n```\n"
    )
    found = commands_of(page)
    assert [(c.line, c.text, c.status, c.skip) for c in found] == [
        (5, "perfci interval --successes 1 --trials 2", 0, None),
        (8, "perfci nonsense", 2, None),
        (13, "perfci demo   # a comment", 0, None),
        (19, "perfci validate run x", 0, "it needs a full disk"),
    ]
    assert found[0].shown == ["agresti_coull 95% interval ..."]


@pytest.mark.parametrize(
    ("shown", "printed", "matches"),
    [
        (["a  b", "c"], "a b\nc\n", True),
        (["x ... z"], "x y\ny z", True),
        (["x ... z"], "x y", False),
        (["0.880 [0.821, 0.923]"], "0.880 [0.821, 0.924]", False),
        (['{"low": 0.8205286284166123}'], '{"low": 0.8205286284166124}', True),
        (['{"low": 0.8205286284166123}'], '{"low": 0.8205296284166123}', False),
        (["n = 30"], "n = 31", False),
    ],
)
def test_shown_output_is_compared_by_the_rules(shown, printed, matches):
    assert output_matches(shown, printed) is matches


def _install_page() -> str:
    return (ROOT / "docs" / "install.md").read_text()


def test_the_install_page_shows_the_real_help(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    (command,) = [c for c in COMMANDS["install.md"] if c.text.endswith("perfci --help")]
    assert "\n".join(command.shown) + "\n" == build_parser().format_help()


def test_the_install_page_lists_every_make_target_and_the_python_the_makefile_takes():
    makefile = (ROOT / "Makefile").read_text()
    (phony,) = re.findall(r"^\.PHONY:(.*)$", makefile, re.M)
    page = _install_page()
    documented = set(re.findall(r"^\| `make ([\w-]+)`", page, re.M))
    assert documented == set(phony.split())
    assert "sys.version_info[:2] == (3, 12)" in makefile  # 3.12, and no other
    assert "Python 3.12" in page and "or later" not in page and "or newer" not in page


def test_the_validation_page_gives_every_scale_of_every_shipped_suite():
    from perfci import harness

    page = (ROOT / "docs" / "validation.md").read_text()
    row = re.compile(r"^\| `([\w-]+)` \| (\w+) \| ([\d,]+) \| ([\w,]+) \| ([\w,]+) \|$", re.M)
    documented = {(m[0], m[1]): m[2:] for m in row.findall(page)}
    expected = {}
    for name in harness.list_suites(harness.suite_dirs()[-1]):  # the shipped suites
        suite = harness.load_suite(harness.suite_dirs()[-1] / f"{name}.toml")
        for scale, spec in suite.scales.items():
            counts = ("exact", "exact") if spec.exact else (spec.replications, spec.resamples)
            cells = len(suite.cells(scale))
            expected[(name, scale)] = tuple(
                f"{c:,}" if isinstance(c, int) else c for c in (cells, *counts)
            )
    assert documented == expected
