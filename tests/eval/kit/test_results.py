"""The benchmark page: stamped with this machine, every figure beside its command, the README's block replaced."""

from pathlib import Path

import pytest

from eval.kit.results import (
    README_END,
    README_START,
    Figure,
    machine_stamp,
    readme_block,
    results_page,
    with_readme_block,
)

CPUINFO = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512_vnni
"""
FIGURES = [Figure("bundled cases", "wrong answers", "0", "python -m eval.replay --kb kb", headline=True),
           Figure("silent calls", "agent alone, cores", "0.010", "python -m eval.listening_cost --calls 0,4")]


def test_the_stamp_names_the_cpu_its_vector_extensions_and_the_memory():
    stamp = machine_stamp(CPUINFO, "MemTotal:       24576000 kB\n", 2, "2026-12-05", "abc1234")
    assert stamp.cpu == "Intel(R) Xeon(R) Platinum 8488C" and stamp.memory_gib == 23
    assert stamp.vectors == "SSE4.2, AVX, AVX2, FMA, AVX-512F, AVX-512 VNNI"
    assert "2 cores" in stamp.line() and "commit abc1234" in stamp.line()


def test_this_machines_own_cpuinfo_is_read():
    stamp = machine_stamp(Path("/proc/cpuinfo").read_text(), Path("/proc/meminfo").read_text(), 2, "d", "c")
    assert stamp.cpu != "unknown CPU" and stamp.memory_gib > 0


def test_every_figure_is_shown_with_the_command_behind_it():
    stamp = machine_stamp(CPUINFO, "", 2, "2026-12-05", "abc1234")
    page = results_page(stamp, FIGURES, [("Latency", "results/latency.png")], quick=True)
    assert "python -m eval.bench --quick" in page and "Intel(R) Xeon(R) Platinum 8488C" in page
    assert "| silent calls | agent alone, cores | 0.010 | `python -m eval.listening_cost --calls 0,4` |" in page
    assert "![Latency](results/latency.png)" in page


def test_the_readme_keeps_everything_but_its_block_which_holds_the_headline_figures_only():
    readme = f"# Agent\n\nintro\n\n{README_START}\nold figures\n{README_END}\n\n## Layout\n"
    block = readme_block(machine_stamp(CPUINFO, "", 2, "2026-12-05", "abc1234"), FIGURES)
    updated = with_readme_block(readme, block)
    assert updated.startswith("# Agent\n\nintro\n\n") and updated.endswith("\n\n## Layout\n")
    assert "old figures" not in updated and "| bundled cases: wrong answers | 0 |" in updated
    assert "silent calls" not in updated


def test_a_readme_without_the_block_is_refused_not_rewritten():
    with pytest.raises(ValueError, match="bench:start"):
        with_readme_block("# Agent\n\nno block here\n", "block")
