"""The reliability page cites only tests that exist."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_cited_in_the_reliability_page_exists():
    page = (ROOT / "docs" / "reliability.md").read_text()
    cited = set(re.findall(r"`(?:tests/[\w/]+\.py::)?(test_\w+)", page))
    source = "".join(p.read_text() for p in (ROOT / "tests").glob("*.py"))
    missing = sorted(n for n in cited if not re.search(rf"def {n}\b", source))
    assert len(cited) > 100 and not missing, missing
