"""The real-HPO suite's own report section: issue 30's targets (GP-UCB against GPSampler and
the TPEs, the worst task, GP-TS against GP-UCB). The scores, tables and paired differences are
the harness's one report (``benchmarks/harness/report.py``), scored against the result set's
Random runs (``benchmarks/harness/scoring.py``, rule ``random-runs``)."""

from __future__ import annotations

from benchmarks.harness.report import fmt as _f
from benchmarks.harness.scoring import means, paired


def targets(cells: dict[str, dict], samplers: list[str], default: str,
            budgets: list[str]) -> list[str]:
    """Issue 30's targets of ``default`` against GPSampler and TPE, per scored budget (a label
    such as ``T = 40``)."""
    lines = [f"## Targets (issue 30; default sampler `{default}`)", "",
             "Value: the difference of the suite means ± its paired standard error (from the "
             "per-seed differences of the two samplers' runs, combined over tasks; see "
             "`paired`).", "", "| target | T | value | met |", "|---|---:|---|---|"]

    def pair(a: str, b: str, T: int) -> tuple[list[str], dict]:
        return means(cells, [a, b], T) if a in samplers and b in samplers else ([], {})

    for T in budgets:
        for ref, need, what in (("GPSampler", 10, "score"), ("TPE", 25, "score"),
                                ("TPE-uv", 25, "score"), ("TPE-mv", 25, "score"),
                                ("GPSampler", 5, "anytime")):
            common, m = pair(default, ref, T)
            if not m:
                continue
            i = 0 if what == "score" else 2
            d = m[default][i] - m[ref][i]
            se = paired(cells, ref, default, T, what)[1]
            lines.append(f"| {what} {default} >= {ref} + {need} | {T} | {_f(d, se, signed=True)} "
                         f"({len(common)} tasks) | {'yes' if d >= need else '**no**'} |")
        for ref in ("TPE", "TPE-uv", "TPE-mv"):
            common, m = pair(default, ref, T)
            if not m:
                continue
            worst = min(common, key=lambda t: cells[t][(default, T)].score
                        - cells[t][(ref, T)].score)
            d = cells[worst][(default, T)].score - cells[worst][(ref, T)].score
            lines.append(f"| no task more than 5 below {ref} | {T} | worst {d:+.1f} ({worst}) | "
                         f"{'yes' if d >= -5 else '**no**'} |")
        common, m = pair("GP-TS", "GP-UCB", T)
        if m:
            d = m["GP-TS"][0] - m["GP-UCB"][0]
            se = paired(cells, "GP-UCB", "GP-TS", T)[1]
            lines.append(f"| score GP-TS >= GP-UCB - 3 | {T} | {_f(d, se, signed=True)} "
                         f"({len(common)} tasks) | {'yes' if d >= -3 else '**no**'} |")
    return lines + [""]


def _variants(cells: dict[str, dict], samplers: list[str], budgets: list[int]) -> list[str]:
    """Each variant (``Name{json}``) against its base sampler ``Name``, paired by seed."""
    pairs = [(s.split("{", 1)[0], s) for s in samplers
             if "{" in s and s.split("{", 1)[0] in samplers]
    if not pairs:
        return []
    lines = ["## Variants against their base sampler (paired by seed)", "",
             "| variant | T | score difference | anytime difference | tasks | seed pairs |",
             "|---|---:|---:|---:|---:|---:|"]
    for base, var in pairs:
        for T in budgets:
            d, se, n_tasks, n_pairs = paired(cells, base, var, T)
            if n_tasks:
                a, ase = paired(cells, base, var, T, "anytime")[:2]
                lines.append(f"| {var} | {T} | {_f(d, se, signed=True)} | "
                             f"{_f(a, ase, signed=True)} | {n_tasks} | {n_pairs} |")
    return lines + [""]




def sections(data) -> list[str]:
    """The targets of ``data.base`` (the report's base sampler)."""
    return targets(data.cells, data.samplers, data.base, data.labels)
