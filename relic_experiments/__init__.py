"""Experiment grids: methods x benchmarks x runs, on one machine or a Ray cluster, into the paper's tables.

A grid is a small TOML file (:mod:`relic_experiments.spec`); each of its cells is an
ordinary run directory of ``relic learn`` or of a comparator (:mod:`relic_experiments.cell`),
so a cell resumes exactly like a run and a finished cell is never run twice; cells run
in a local process pool or as Ray tasks (:mod:`relic_experiments.runner`); the finished
cells become the paper's tables (:mod:`relic_experiments.tables`). ``relic-grid`` is
the command line (:mod:`relic_experiments.cli`).

This package sits on top of ``relic_learner`` and ``baselines``; neither imports it.
"""

from relic_experiments.cell import Cell, CellResult, run_cell
from relic_experiments.spec import GridSpec, load_spec

__all__ = ["Cell", "CellResult", "GridSpec", "load_spec", "run_cell"]
