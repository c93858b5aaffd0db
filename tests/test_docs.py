"""The pages' claims hold: the reliability page cites only tests that exist, README's Python
examples print what they show with the persons passed, and the built docs need no network.
"""

import ast
import doctest
import inspect
import re
from pathlib import Path

import pytest

import perfci as pc

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: A URL with a scheme (https:, http:, ...) or protocol-relative (//host/...): another host.
NETWORK = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)


def test_every_test_cited_in_the_reliability_page_exists():
    page = (ROOT / "docs" / "reliability.md").read_text()
    cited = set(re.findall(r"`(?:tests/[\w/]+\.py::)?(test_\w+)", page))
    source = "".join(p.read_text() for p in (ROOT / "tests").glob("*.py"))
    missing = sorted(n for n in cited if not re.search(rf"def {n}\b", source))
    assert len(cited) > 100 and not missing, missing


def _readme_examples() -> doctest.DocTest:
    text = README.read_text()
    return doctest.DocTestParser().get_doctest(text, {}, README.name, str(README), 0)


def test_the_python_examples_in_the_readme_print_what_they_show():
    test = _readme_examples()
    failures: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test, out=failures.append)
    assert len(test.examples) >= 10 and runner.failures == 0, "".join(failures)


def test_the_readme_passes_the_persons_to_every_function_that_takes_them():
    # The example data are utterances nested in therapists: a call without `groups=` would
    # print the interval of independent texts, too narrow for them.
    missing = []
    for example in _readme_examples().examples:
        for node in ast.walk(ast.parse(example.source)):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            owner, name = node.func.value, node.func.attr
            if not (isinstance(owner, ast.Name) and owner.id == "pc"):
                continue
            takes_groups = "groups" in inspect.signature(getattr(pc, name)).parameters
            if takes_groups and "groups" not in {k.arg for k in node.keywords}:
                missing.append(f"README.md:{example.lineno + 1}: pc.{name}")
    assert not missing, missing


def _docs_conf() -> dict:
    path = ROOT / "docs" / "conf.py"
    namespace: dict = {"__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def test_the_docs_load_mathjax_and_every_script_from_their_own_files():
    conf = _docs_conf()
    assert "sphinx-mathjax-offline" in conf["extensions"]
    scripts = [conf.get("mathjax_path", "")]
    scripts += [e if isinstance(e, str) else e[0] for e in conf.get("html_js_files", [])]
    assert not [s for s in scripts if NETWORK.match(str(s))], scripts


def test_the_offline_extension_points_mathjax_at_its_own_copy():
    # What the extension does at setup (the docs extra installs it); a release that moved
    # MathJax to a CDN would fail here.
    extension = pytest.importorskip("sphinx-mathjax-offline")

    class App:
        config = type("Config", (), {})()

        def connect(self, event, handler):
            self.event = event

    app = App()
    extension.setup(app)
    path = app.config.mathjax_path
    copied = Path(extension.__file__).parent / "static" / "mathjax" / path.removeprefix("mathjax/")
    assert not NETWORK.match(path) and copied.is_file() and app.event == "build-finished"
