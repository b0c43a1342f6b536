"""IGP-UCB under constraints: optimistic feasibility (CONFIG, Xu et al. 2023; default) or
long-term average constraints (Shi & Eryilmaz, AISTATS 2022, Algorithms 2 and 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from optuna_gpbandit._arguments import forward
from optuna_gpbandit.constraints import FeasibleConstraints, LongTermConstraints, Psi
from optuna_gpbandit.samplers._docs import document

if TYPE_CHECKING:
    from optuna.samplers import BaseSampler
    from optuna.trial import FrozenTrial

    from optuna_gpbandit._pending import Censoring
    from optuna_gpbandit.changepoint import ChangeDetection
from optuna_gpbandit.samplers.igp_ucb import IGPUCBSampler


@document
class ConstrainedGPUCBSampler(IGPUCBSampler):
    """IGP-UCB under black-box constraints: the best feasible trial (default), or constraints
    that hold on average over the study (Shi & Eryilmaz's long-term mode).

    A constraint value ``> 0`` is a violation, as in Optuna. Values come from
    ``trial.set_constraint(name, value)`` in the objective, or from ``constraints_func`` as with
    Optuna's own samplers; ``study.best_trial`` is then the best feasible trial.

    * ``mode="feasible"`` (default): optimistic feasibility (CONFIG, Xu et al., ICML 2023). One
      GP per constraint, fitted on the constraint's standardised values (its units do not
      matter); IGP-UCB's upper bound is maximised over the points whose constraint lower
      confidence bounds ``mu_j - width * sigma_j`` are all ``<= 0``, and while no point
      qualifies the next trial minimises the optimistic violation. Every trial aims at a
      feasible point: choose it when each trial must respect a budget (memory, latency, cost).
      Any sampler of this package takes the same rule through
      ``constraints=FeasibleConstraints(...)``.
    * ``mode="long_term"``: Algorithms 2 and 3 of Shi & Eryilmaz (AISTATS 2022). Trials are
      grouped in epochs of ``epoch_length``; after each full epoch the multipliers ``kappa_j``
      are updated from the epoch's mean constraint values, and the GP is fitted to

      - ``variant="noiseless"`` (Algorithm 2): ``f - sum_j kappa_j (psi(g_j) - 1)``, with
        ``kappa_j <- kappa_j * psi(mean g_j)`` (``psi = exp(c x)`` or ``(1 + c x)^n`` above 0,
        1 below; kept in log form);
      - ``variant="noisy"`` (Algorithm 3): ``f - sum_j kappa_j g_j``, with
        ``kappa_j <- max(0, kappa_j + kappa_step * mean g_j)`` and the noise level
        ``sqrt(1 + sum kappa_j^2) R`` in ``beta_t`` (when ``R`` is given; a fitted noise level
        already holds the penalised targets' noise).

      Only the time average ``(1/T) sum_t g_j(x_t)`` is kept ``<= 0``: single trials may violate
      the constraints when others are well inside. Choose it when the budget is an average over
      many runs (e.g. a mean cost per job, an energy budget per day), not a per-trial limit.
      Constraint values are divided by a per-constraint scale (their mean absolute value over
      the first epoch) and the objective by its standard deviation there, so units do not
      matter here either (``LongTermConstraints(scale=False)``: the paper's raw values).

    Nothing is kept in the sampler: constraint models and multipliers are rebuilt from the
    stored trials at every call (only COMPLETE trials count), so a resumed study or another
    worker gets the same ones. The long-term multipliers are written to each sampled trial's
    system attr ``gpbandit:multipliers`` for optuna-dashboard.

    Further settings go through ``constraints=FeasibleConstraints(...)`` or
    ``constraints=LongTermConstraints(...)`` (``names``, ``include_pruned``, ``epoch_order``,
    ``max_log_kappa``, ...), which replace ``mode`` and the constraint arguments below.

    Parameters
    ----------
    mode
        ``"feasible"`` (default: the best feasible trial) or ``"long_term"`` (constraints met
        on average; Shi & Eryilmaz's Algorithms 2 and 3). Here ``constraints`` defaults to
        ``None``, meaning the rule of ``mode``; a ``FeasibleConstraints`` or
        ``LongTermConstraints`` instance replaces it.
    width
        ``mode="feasible"``: the confidence width of the constraints' lower bounds in posterior
        standard deviations (default 2.0).
    variant
        ``mode="long_term"``: ``"noiseless"`` (Algorithm 2, default) or ``"noisy"``
        (Algorithm 3).
    epoch_length
        ``mode="long_term"``: ``S``, trials per epoch (default 20, the paper's experiments);
        keep it fixed for a study.
    psi, psi_c, psi_n
        ``mode="long_term"``, Algorithm 2's ``psi``: ``"exp"`` (default, ``exp(c x)`` with
        ``psi_c = 1``), ``"poly"`` (``(1 + c x)^n``, ``psi_n = 2``) or a callable with
        ``psi(0) = 1``, non-decreasing.
    kappa_init
        ``mode="long_term"``: initial multipliers: 1 (Algorithm 2) or 0 (Algorithm 3) by
        default.
    kappa_step
        ``mode="long_term"``: Algorithm 3's step (default 0.5, the paper's experiments) or
        ``"theory"``.
    history
        ``mode="long_term"``: ``"all"`` (default): every trial re-scored with the current
        multipliers goes to the GP. ``"epoch"``: the paper's literal fresh start per epoch (much
        worse in our measurements).
    n_trials_hint
        ``mode="long_term"``: the horizon ``T`` if known, for ``L = ceil(T / S)`` in
        ``delta / L``.
    on_missing
        Trials whose constraint values are missing, NaN/inf or differently keyed are ``"skip"``-ped
        with a logged warning (default) or ``"raise"`` an error.
    <kernelized parameters>
    <common parameters>
    <restarts parameters>
    <warping parameters>
    <input_warping parameters>
    """

    _multi_objective = False  # one objective only

    def __init__(
        self,
        *,
        mode: str = "feasible",
        width: float | None = None,
        variant: str | None = None,
        epoch_length: int | None = None,
        psi: str | Callable[[Any], Any] | Psi | None = None,
        psi_c: float | None = None,
        psi_n: float | None = None,
        kappa_init: float | Sequence[float] | None = None,
        kappa_step: float | str | None = None,
        history: str | None = None,
        n_trials_hint: int | None = None,
        on_missing: str = "skip",
        B: float = 0.5,
        R: float | None = None,
        delta: float = 0.1,
        lam: float | str | None = None,
        horizon: int | None = None,
        gamma: str | float | Callable[[int, int], float] = "data",
        early_beta_factor: float = 1.0,
        seed: int | None = None,
        n_startup_trials: int | None = None,
        independent_sampler: BaseSampler | None = None,
        deterministic_objective: bool = False,
        kernel: str = "matern52",
        lengthscale: float | Sequence[float] | None = None,
        kernel_scale: float | None = None,
        noise_var: float | None = None,
        standardize: bool = True,
        n_candidates: int = 1024,
        n_local_search: int = 5,
        refit_growth: float = 0.05,
        max_fit_points: int = 256,
        max_posterior_points: int | None = 1500,
        warn_independent_sampling: bool = True,
        pending: str | Censoring = "hallucinate",
        stale_after: float | None = None,
        constraints: FeasibleConstraints | LongTermConstraints | None = None,
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        change_detection: ChangeDetection | None = None,
        failures: str = "impute",
        restarts: bool = False,
        output_warping: bool = True,
        input_warping: bool = True,
    ) -> None:
        if constraints is None:
            constraints = _constraint_rule(mode, width, on_missing, {
                "variant": variant, "epoch_length": epoch_length, "psi": psi, "psi_c": psi_c,
                "psi_n": psi_n, "kappa_init": kappa_init, "kappa_step": kappa_step,
                "history": history, "n_trials_hint": n_trials_hint,
            })
        super().__init__(**forward(IGPUCBSampler, locals()))


MODES = ("feasible", "long_term")


def _constraint_rule(mode: str, width: float | None, on_missing: str,
                     long_term: dict[str, Any]) -> FeasibleConstraints | LongTermConstraints:
    """The constraint rule of ``mode``; an argument of the other mode is an error."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}.")
    if mode == "feasible":
        given = [name for name, value in long_term.items() if value is not None]
        if given:
            raise ValueError(
                f"ConstrainedGPUCBSampler: {given[0]} applies to mode='long_term' (constraints "
                "met on average over the study); pass mode='long_term' to use it."
            )
        given_width = {} if width is None else {"width": width}
        return FeasibleConstraints(on_missing=on_missing, **given_width)
    if width is not None:
        raise ValueError("ConstrainedGPUCBSampler: width applies to mode='feasible'.")
    # Arguments left at None take LongTermConstraints' own defaults.
    return LongTermConstraints(on_missing=on_missing,
                               **{k: v for k, v in long_term.items() if v is not None})
