"""Make the screenshot of the HTML validation report on the publishing page.

Run from the repository root (it needs Chromium: ``apt-get install chromium``)::

    .venv/bin/python docs/_static/make_report_example.py

It writes the bundled example data to a temporary folder, runs

    perfci report texts.csv --truth human --pred model --group person --seed 1
        --html report.html --bayes --quiet

there, and has headless Chromium take a 1200 x 1600 screenshot of the top of the page
into ``docs/_static/report_example.png``.
"""

import shutil
import subprocess
import tempfile
from pathlib import Path

import perfci as pc
from perfci.cli import main

HERE = Path(__file__).resolve().parent
COMMAND = (
    "report texts.csv --truth human --pred model --group person --seed 1 "
    "--html report.html --bayes --quiet"
)


def make_report(folder: Path) -> Path:
    """Write the example data and its HTML report (with the Bayesian rows) in `folder`.

    Parameters
    ----------
    folder : pathlib.Path
        An existing folder.

    Returns
    -------
    pathlib.Path
        The HTML report.
    """
    pc.load_example().to_csv(folder / "texts.csv", index=False)
    argv = [str(folder / a) if a.endswith((".csv", ".html")) else a for a in COMMAND.split()]
    status = main(argv)
    if status != 0:
        raise SystemExit(f"perfci {COMMAND} failed with status {status}")
    return folder / "report.html"


def screenshot(page: Path, target: Path, profile: Path) -> None:
    """Take a 1200 x 1600 screenshot of the top of `page` with headless Chromium.

    Parameters
    ----------
    page : pathlib.Path
        The HTML file.
    target : pathlib.Path
        The PNG file written.
    profile : pathlib.Path
        A folder for the browser's profile.
    """
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("chromium is not on the PATH: apt-get install chromium")
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--window-size=1200,1600",
            f"--screenshot={target}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        page = make_report(Path(folder))
        screenshot(page, HERE / "report_example.png", Path(folder) / "profile")
