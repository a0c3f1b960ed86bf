"""The README's figures are the short form of the last eval.bench run: the same stamp as docs/results.md, every
figure found there, and a README a newcomer reads in one go."""

import re

from eval.kit.results import README_END, README_START
from tests.conftest import REPO

README = (REPO / "README.md").read_text()
RESULTS = (REPO / "docs" / "results.md").read_text()


def test_the_readme_fits_on_a_few_screens():
    assert len(README.splitlines()) <= 150


def test_the_readmes_figures_are_the_last_bench_runs():
    block = README[README.index(README_START):README.index(README_END)]
    stamp = re.search(r"run on (.+?) \(\[all figures\]", block).group(1)
    assert f"**{stamp}**" in RESULTS
    rows = re.findall(r"^\| (.+?): (.+?) \| (.+?) \|$", block, re.M)
    assert rows
    for benchmark, figure, value in rows:
        assert f"| {benchmark} | {figure} | {value} |" in RESULTS
