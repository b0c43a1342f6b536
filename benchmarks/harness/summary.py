"""One table of every suite against every peer (``python -m benchmarks summary``).

    python -m benchmarks summary bbob=DIR1,DIR2 users=DIR3 bayesmark=DIR4 [--base GP-UCB]

A row per (suite, half) and scored budget (the suite's first label: ``T = 40`` for the ML
suites, ``budget`` for bbob), a column per sampler: the sampler's score (the suite's unit, mean
over the problems it and the base both ran) and, for the others, its paired difference from the
base (other minus base, ± the paired standard error over (problem, seed); ``paired`` in
``scoring.py``). The suites' own reports hold the details.
"""

from __future__ import annotations

import math
import time

import numpy as np

from . import scoring as S
from .report import collect, fmt, order, score
from .suite import get_suite


def rows(suite_name: str, dirs: list[str], base: str) -> tuple[list[dict], list[str]]:
    """Per half of the suite: its first label's scores and differences against ``base``."""
    suite = get_suite(suite_name)
    _, runs, _ = collect(suite, dirs)
    if not runs:
        raise SystemExit(f"summary: no run of suite {suite_name} in {', '.join(dirs)}")
    cells, _, labels = score(suite, runs, dirs)
    samplers = order({r["sampler"] for r in runs})
    out = []
    for half in [h for h in suite.halves]:
        names = set(suite.names(half))
        sub = {p: c for p, c in cells.items() if p in names}
        if not sub:
            continue
        label = labels[0]
        row: dict = {"suite": suite_name, "half": half, "label": label, "cells": {}}
        for s in samplers:
            common, m = S.means(sub, [base, s] if s != base else [s], label)
            if s not in m:
                continue
            d = S.paired(sub, base, s, label) if s != base else None
            row["cells"][s] = (m[s][0], d, len(common))
        row["problems"] = max((v[2] for v in row["cells"].values()), default=0)
        out.append(row)
    return out, samplers


def render(pairs: list[str], base: str = "GP-UCB", out_file: str | None = None) -> str:
    all_rows, samplers = [], []
    for pair in pairs:
        name, _, dirs = pair.partition("=")
        if not dirs:
            raise SystemExit(f"summary: {pair!r} is not SUITE=DIR[,DIR...]")
        r, s = rows(name, dirs.split(","), base)
        all_rows += r
        samplers += [x for x in s if x not in samplers]
    samplers = order(set(samplers))
    lines = [f"Written {time.strftime('%Y-%m-%d %H:%M')} by `python -m benchmarks summary "
             f"{' '.join(pairs)} --base {base}`. Each cell: the score (mean over the problems "
             f"the sampler and {base} both ran), and for a peer its paired difference from "
             f"{base} (± the paired standard error over (problem, seed)); bold: the best score "
             "of the row.", "",
             "| suite | half | at | problems | " + " | ".join(samplers) + " |",
             "|---|---|---|---:" + "|---:" * len(samplers) + "|"]
    for row in all_rows:
        scores = [row["cells"][s][0] for s in samplers if s in row["cells"]]
        top = max(scores) if scores else math.nan
        cells = []
        for s in samplers:
            if s not in row["cells"]:
                cells.append("–")
                continue
            m, d, _ = row["cells"][s]
            text = f"**{fmt(m)}**" if np.isclose(m, top) else fmt(m)
            if d is not None:
                text += f" ({fmt(d[0], d[1], signed=True)})"
            cells.append(text)
        lines.append(f"| {row['suite']} | {row['half']} | {row['label']} | {row['problems']} | "
                     + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if out_file:
        with open(out_file, "w") as fh:
            fh.write(text)
    return text
