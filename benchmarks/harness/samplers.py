"""Samplers of the harness by name: ours with their defaults against Optuna's.

A name may also be a *variant* of one of ours: the sampler's name followed by a JSON object
of constructor arguments (quote it in the shell). A number, string, ``true``/``false`` or
``null`` is a flat argument (``'GP-TS{"n_startup_trials": 10}'``,
``'GP-UCB{"deterministic_objective": true}'``, ``'GP-UCB{"beta": 1.0}'``: a constant
``beta_t``). A JSON object is a settings object given by its fields; the fields not given keep
the sampler's default for that argument (``dataclasses.replace`` of the default in the
sampler's signature)::

    'GP-UCB{"beta": {"scale": 0.15}}'          # Theorem1(scale=0.15), early_factor 3 kept
    'GP-TS{"width": {"B": 0.7}}'                # InfoGainWidth(B=0.7, R=0.0, early_factor=3.0)
    'GP-UCB{"model": {"input_warping": false}}' # GPModel(input_warping=False)
    'IGP-UCB{"search": {"n_candidates": 256}}'  # AcquisitionSearch(n_candidates=256)

A ``"type"`` key chooses another class of the package (any public name of
``optuna_gpbandit``, or ``"Class.method"`` for a constructor such as ``"Theorem1.paper"``,
``"Censoring.paper"``, ``"ChangeDetection.avanesov"``): the fields the default object shares
with that class are kept, the rest are that class's defaults (a ``"Class.method"`` gets the
given fields only). For ``beta``, ``"theorem": 2`` is short for ``"type": "Theorem2"``::

    'GP-UCB{"pending": {"type": "Censoring", "window": 10}}'
    'GP-UCB{"reset": {"type": "Restarts", "patience": 5}}'
    'GP-TS{"draw": {"type": "CandidateDraw"}}'
    'GP-UCB{"beta": {"theorem": 3, "rkhs_bound": 2.0}}'

A field's value may itself be such an object: with a ``"type"``, that class
(``{"type": "ChangeDetection", "settings": {"type": "ResidualTest", "alpha": 0.001}}``);
without, the field's default with the given fields replaced
(``'GP-UCB{"search": {"trust_region": {"start_at_centre": false}}}'``).

Names written for the earlier flat arguments (``'GP-UCB{"beta_scale": 0.15}'``,
``'GP-TS{"B": 0.7, "n_candidates": 256}'``, ``'GP-UCB{"pending": "censor"}'``; stored reports
and docs/benchmarks.md carry them) are translated to the same settings
(:func:`modern_name` prints the translation). The runs carry the whole name as given, so a
variant is scored beside the defaults as a sampler of its own (``python -m benchmarks run
--samplers ...``, ``python -m benchmarks.hpo run --samplers ...``).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any, Callable

import optuna

import optuna_gpbandit
from optuna_gpbandit import GPModel, GPTSSampler, GPUCBSampler, IGPUCBSampler

from .peers import BUDGETED, PEERS
from .swaps import (BoTorchPriorGPUCB, EvidenceCentreGPUCB, IntersectionGPUCB, LogEIGPUCB,
                    SharedCentreGPUCB, UnitPriorGPUCB)

SAMPLERS: dict[str, Callable[..., optuna.samplers.BaseSampler]] = {
    "GP-UCB": lambda seed: GPUCBSampler(seed=seed),
    "IGP-UCB": lambda seed: IGPUCBSampler(seed=seed),
    "GP-TS": lambda seed: GPTSSampler(seed=seed),
    "GPSampler": lambda seed: optuna.samplers.GPSampler(seed=seed),  # needs torch
    "TPE": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "Random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
    # without input warping (the papers' stationary kernel): the measured alternative
    "GP-UCB-stationary": lambda seed: GPUCBSampler(seed=seed,
                                                   model=GPModel(input_warping=False)),
    "GP-TS-stationary": lambda seed: GPTSSampler(seed=seed, model=GPModel(input_warping=False)),
    # the parameters every trial has, the rest independent (GPSampler's conditional spaces)
    "GP-UCB-intersection": lambda seed: IntersectionGPUCB(seed=seed),
    # GPSampler's acquisition (log EI) on our model (issue 60's swap table)
    "GP-UCB-logEI": lambda seed: LogEIGPUCB(seed=seed),
    # GPSampler's lengthscale prior centre (l = 1 in every dimension) on our model
    "GP-UCB-prior1": lambda seed: UnitPriorGPUCB(seed=seed),
    # BoTorch's dimension-scaled lengthscale prior on our model
    "GP-UCB-prior-botorch": lambda seed: BoTorchPriorGPUCB(seed=seed),
    # a lengthscale prior centre learned in the fit (a shared offset of every log l_i)
    "GP-UCB-centre0.5": lambda seed: SharedCentreGPUCB(seed=seed, centre_sd=0.5),
    "GP-UCB-centre1": lambda seed: SharedCentreGPUCB(seed=seed, centre_sd=1.0),
    # the centre chosen between ours and l = 1 by the log posterior of each fit
    "GP-UCB-centre-evidence": lambda seed: EvidenceCentreGPUCB(seed=seed),
    **PEERS,
}
OURS = ["GP-UCB", "IGP-UCB", "GP-TS"]
_CLASSES = {"GP-UCB": GPUCBSampler, "IGP-UCB": IGPUCBSampler, "GP-TS": GPTSSampler}

# ----------------------------------------------------------------- the earlier flat arguments
_MODEL_FIELDS = ("kernel", "lengthscale", "kernel_scale", "noise_var", "standardize",
                 "output_warping", "input_warping", "refit_growth", "max_fit_points",
                 "max_posterior_points")
_LEGACY_COMMON = {**{f: ("model", f) for f in _MODEL_FIELDS},
                  "n_candidates": ("search", "n_candidates"),
                  "n_local_search": ("search", "n_local_search"),
                  "stale_after": ("pending", "stale_after")}
_LEGACY_BETA = {"beta_scale": ("beta", "scale"), "early_beta_factor": ("beta", "early_factor"),
                "delta": ("beta", "delta"), "lipschitz_a": ("beta", "a"),
                "lipschitz_b": ("beta", "b"), "domain_r": ("beta", "r"),
                "rkhs_bound": ("beta", "rkhs_bound")}
_LEGACY_WIDTH = {"B": ("width", "B"), "R": ("width", "R"), "delta": ("width", "delta"),
                 "gamma": ("width", "gamma"), "early_beta_factor": ("width", "early_factor"),
                 "n_features": ("draw", "n_features")}
_LEGACY_STRINGS = {  # argument -> earlier string value -> its settings object
    "beta": {"auto": "Theorem1", "theorem1": "Theorem1", "theorem2": "Theorem2",
             "theorem3": "Theorem3"},
    "pending": {"hallucinate": "Hallucinate", "censor": "Censoring", "ignore": "IgnorePending"},
    "draw": {"path": "PathDraw", "candidates": "CandidateDraw"},
}


def modern_arguments(cls: type, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with the earlier flat arguments of ``cls`` (``beta_scale``, ``B``,
    ``n_candidates``, ``pending="censor"``, ``restarts=True``, ``lam``, ...) moved into the
    settings objects' fields; new-style arguments are returned unchanged."""
    params = inspect.signature(cls).parameters
    moves = {**_LEGACY_COMMON, **(_LEGACY_BETA if "beta" in params else _LEGACY_WIDTH)}
    out: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}

    def put(arg: str, field: str, value: Any) -> None:
        nested.setdefault(arg, {})[field] = value

    lam, horizon = args.get("lam"), args.get("horizon")
    for key, value in args.items():
        if key in _LEGACY_STRINGS and isinstance(value, str) and key in params:
            kind = _LEGACY_STRINGS[key].get(value)
            if kind is None:
                out[key] = value  # let the sampler reject it
            else:
                put(key, "type", kind)
        elif key == "failures" and isinstance(value, str):
            if value not in ("impute", "ignore"):
                out[key] = value
            else:
                put("failures", "impute", value == "impute")
        elif key == "restarts" and "restarts" not in params:
            if value is True:
                put("reset", "type", "Restarts")
            elif value is not False:
                out[key] = value
        elif key in ("lam", "horizon") and "lam" not in params:
            continue
        elif key not in params and key in moves:
            put(*moves[key], value)
        else:
            out[key] = value
    if lam is not None and "lam" not in params:
        if lam == "theory":
            if not isinstance(horizon, (int, float)) or horizon < 1:
                raise ValueError('lam="theory" needs horizon=T (an integer >= 1)')
            noise = 1.0 + 2.0 / horizon
        else:
            noise = lam
        scale = nested.get("model", {}).get("kernel_scale")
        put("model", "noise_var", noise * scale if isinstance(scale, (int, float)) and
            isinstance(noise, (int, float)) else noise)
    for arg, fields in nested.items():
        given = out.get(arg)
        if isinstance(given, dict):
            out[arg] = {**fields, **given}
        elif given is None:
            out[arg] = fields
        else:
            raise ValueError(f"{arg} given both as {given!r} and by the earlier arguments "
                             f"{sorted(fields)}")
    return out


def modern_name(name: str) -> str:
    """A variant name in the new syntax (``'GP-UCB{"beta_scale": 0.1}'`` ->
    ``'GP-UCB{"beta": {"scale": 0.1}}'``); other names unchanged."""
    i = name.find("{")
    if i < 0 or name[:i] not in _CLASSES:
        return name
    args = json.loads(name[i:])
    return name[:i] + json.dumps(modern_arguments(_CLASSES[name[:i]], args))


# ----------------------------------------------------------------- JSON -> constructor arguments
def _resolve_type(arg: str, type_name: Any) -> Callable[..., Any]:
    """The package's class (or ``Class.method`` constructor) named ``type_name``."""
    if not isinstance(type_name, str):
        raise ValueError(f'{arg}: "type" must be a name such as "Censoring", got {type_name!r}')
    cls_name, _, method = type_name.partition(".")
    if cls_name not in optuna_gpbandit.__all__ or not isinstance(
            getattr(optuna_gpbandit, cls_name), type) or cls_name.endswith("Sampler"):
        raise ValueError(f'{arg}: "type": {type_name!r} is not a settings class of '
                         'optuna_gpbandit')
    cls = getattr(optuna_gpbandit, cls_name)
    if not method:
        return cls
    made = getattr(cls, method, None)
    if method.startswith("_") or not inspect.ismethod(made):
        raise ValueError(f'{arg}: "type": {type_name!r}: {cls_name} has no constructor '
                         f'{method!r}')
    return made


def _construct(arg: str, default: Any, fields: dict[str, Any]) -> Any:
    """The settings object of argument ``arg`` from its JSON ``fields`` (see the module doc)."""
    fields = {k: _nested(f"{arg}.{k}", v, getattr(default, k, None)) for k, v in fields.items()}
    kind = fields.pop("type", None)
    if "theorem" in fields and arg == "beta":
        number = fields.pop("theorem")
        if kind is not None or number not in (1, 2, 3):
            raise ValueError(f'beta: "theorem" must be 1, 2 or 3 (and no "type"), got {number!r}')
        kind = f"Theorem{number}"
    if kind is None:
        if not dataclasses.is_dataclass(default) or isinstance(default, type):
            raise ValueError(f"{arg}: the default is {default!r}; name a class with \"type\" "
                             f"(e.g. {{\"type\": \"Restarts\"}})")
        target: Any = type(default)
    else:
        target = _resolve_type(arg, kind)
    if isinstance(target, type) and dataclasses.is_dataclass(target):
        names = {f.name for f in dataclasses.fields(target) if f.init}
        unknown = sorted(set(fields) - names)
        if unknown:
            hint = "" if kind is not None else (
                f"; to replace the default {target.__name__}(), name a class with \"type\"")
            raise ValueError(f"{arg}: {target.__name__} has no field {', '.join(unknown)} "
                             f"(fields: {', '.join(sorted(names))}){hint}")
        if dataclasses.is_dataclass(default) and not isinstance(default, type):
            kept = {f.name: getattr(default, f.name) for f in dataclasses.fields(default)
                    if f.init and f.name in names and f.name not in fields}
            fields = {**kept, **fields}
    try:
        return target(**fields)
    except TypeError as e:
        raise ValueError(f"{arg}: {e}") from None


def _nested(where: str, value: Any, default: Any = None) -> Any:
    """A field's JSON value: an object is a settings object as at the top level (with a
    ``"type"``, that class; without, the field's ``default`` with the given fields replaced,
    e.g. ``{"search": {"trust_region": {"start_at_centre": false}}}``); the rest as given."""
    if isinstance(value, dict):
        return _construct(where, default, value)
    return value


def variant_kwargs(cls: type, args: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``cls`` (one of our samplers) that the JSON object ``args``
    describes (see the module doc). Raises ``ValueError`` for an unknown argument or field."""
    args = modern_arguments(cls, args)
    params = inspect.signature(cls).parameters
    out = {}
    for key, value in args.items():
        if key not in params:
            raise ValueError(f"{cls.__name__} has no argument {key!r}")
        if isinstance(value, dict):
            out[key] = _construct(key, params[key].default, value)
        else:
            out[key] = value
    return out


def parse_variant(name: str) -> tuple[str, dict[str, Any]] | None:
    """``(base, kwargs)`` of a variant name such as ``'GP-TS{"width": {"B": 0.7}}'`` (the
    keyword arguments with their settings objects built); ``None`` for a name without
    arguments. Raises ``ValueError`` naming the variant if the base is not one of ours, the
    arguments are not a JSON object, or the sampler rejects them."""
    i = name.find("{")
    if i < 0:
        return None
    base, text = name[:i], name[i:]
    if base not in _CLASSES:
        raise ValueError(f"variant {name!r}: {base!r} is not one of {', '.join(_CLASSES)}")
    try:
        args = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"variant {name!r}: the arguments are not JSON ({e})") from None
    if not isinstance(args, dict):
        raise ValueError(f"variant {name!r}: the arguments must be a JSON object")
    if "seed" in args:
        raise ValueError(f"variant {name!r}: the seed is the run's, not an argument")
    try:
        kwargs = variant_kwargs(_CLASSES[base], args)
        _CLASSES[base](seed=0, **kwargs)
    except (TypeError, ValueError) as e:
        raise ValueError(f"variant {name!r}: {e}") from None
    return base, kwargs


def unknown_samplers(names: list[str]) -> list[str]:
    """The names that are neither known samplers nor valid variants (with the reason)."""
    bad = []
    for n in names:
        if n in SAMPLERS:
            continue
        try:
            if parse_variant(n) is None:
                bad.append(n)
        except ValueError as e:
            bad.append(str(e))
    return bad


def make_sampler(name: str, seed: int, n_trials: int | None = None
                 ) -> optuna.samplers.BaseSampler:
    """The sampler ``name`` (a known one or a variant of ours) seeded with ``seed``;
    ``n_trials``, the run's budget, for the peers that size their design by it
    (``peers.BUDGETED``)."""
    if name not in SAMPLERS:
        parsed = parse_variant(name)
        if parsed is not None:
            return _CLASSES[parsed[0]](seed=seed, **parsed[1])
    if name in BUDGETED:
        if n_trials is None:
            raise ValueError(f"sampler {name!r} needs the run's budget (n_trials)")
        return SAMPLERS[name](seed, n_trials)
    try:
        return SAMPLERS[name](seed)
    except KeyError:
        raise KeyError(f"unknown sampler {name!r}; known: {', '.join(SAMPLERS)} (or a "
                       "variant such as 'GP-TS{\"width\": {\"B\": 0.7}}')") from None
