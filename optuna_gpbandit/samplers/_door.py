"""Errors that name the fix, for arguments a sampler does not take as given.

Two mistakes are common since the samplers' arguments became settings objects (one per stage):
a flat argument of an earlier version or of another library (``input_warping=False``,
``n_candidates=2048``), which is now a field of a settings object, and a settings object
passed to another stage's argument (``search=GPModel(...)``). Python's own errors say only
"unexpected keyword argument" or show the wrong type; :func:`check_arguments` names the
settings object, its field and the argument instead. It reads the sampler's signature (its
arguments, their defaults and type hints), so a new sampler or settings field needs no entry
here.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import difflib
import functools
import inspect
import types
import typing
from typing import Any

# Earlier flat arguments whose field has another name in its settings object.
_RENAMED = {"beta_scale": "scale", "early_beta_factor": "early_factor", "lipschitz_a": "a",
            "lipschitz_b": "b", "domain_r": "r"}
_CALLABLE: object = collections.abc.Callable  # a hint's callable, which no settings object is
# Earlier flat switches that became a settings object of their own.
_BECAME = {"restarts": "reset=Restarts()", "change_detection": "reset=ChangeDetection()",
           "censoring": "pending=Censoring()", "hallucinate": "pending=Hallucinate()"}


def check_arguments(cls: type, kwargs: dict[str, Any]) -> None:
    """Raise ``TypeError`` for a keyword ``cls`` does not take, naming where it went (the
    settings object and field, or the closest argument), and ``ValueError`` for a settings
    object given to an argument that does not take it, naming the one that does."""
    params = _parameters(cls)
    if not _takes_any(cls):  # a subclass's **kwargs takes any keyword: its __init__ decides
        for name in kwargs:
            if name not in params:
                raise TypeError(_unknown(cls, name, params))
    hints = _hints(cls)
    for name, value in kwargs.items():
        if not _is_settings(value) or _accepts(hints.get(name), value):
            continue
        right = [p for p in params if p != name and hints.get(p) is not None
                 and _accepts(hints[p], value, strict=True)]
        if right:
            kind = type(value).__name__
            takes = " or ".join(c.__name__ for c in _classes(hints.get(name)) or []
                                if c is not _CALLABLE)
            raise ValueError(f"{cls.__name__}: {name}= got {kind}(...), the settings of the "
                             f"{right[0]}= argument; pass {right[0]}={kind}(...)"
                             + (f" ({name}= takes {takes})." if takes else "."))


@functools.lru_cache(maxsize=None)
def _parameters(cls: type) -> dict[str, inspect.Parameter]:
    """The keywords ``cls.__init__`` names."""
    params = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
    return {k: p for k, p in params.items() if k != "self"
            and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


@functools.lru_cache(maxsize=None)
def _takes_any(cls: type) -> bool:
    """Whether ``cls.__init__`` takes ``**kwargs`` (a subclass forwarding them)."""
    params = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
    return any(p.kind == p.VAR_KEYWORD for p in params.values())


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    """The resolved type hints of ``cls.__init__`` (empty if they cannot be resolved: then
    no settings object is checked here, and the stage's own check speaks)."""
    try:
        return typing.get_type_hints(cls.__init__)  # type: ignore[misc]
    except Exception:  # a hint that names what only type checkers import
        return {}


def _is_settings(value: Any) -> bool:
    """A settings object of this package (an instance of one of its dataclasses)."""
    return (dataclasses.is_dataclass(value) and not isinstance(value, type)
            and type(value).__module__.startswith("optuna_gpbandit"))


def _classes(hint: Any) -> list[type] | None:
    """The classes a hint admits (``None``: it admits anything, e.g. ``Any``)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        out: list[type] = []
        for arg in typing.get_args(hint):
            sub = _classes(arg)
            if sub is None:
                return None
            out += sub
        return out
    if origin is typing.Literal or hint is type(None):
        return []
    if origin is not None:
        return [origin] if isinstance(origin, type) else None
    return [hint] if isinstance(hint, type) else None


def _accepts(hint: Any, value: Any, strict: bool = False) -> bool:
    """Whether ``hint`` admits ``value`` (a hint it cannot read admits it, unless
    ``strict``: then only a class of the hint's, never a callable, admits it)."""
    classes = _classes(hint)
    if classes is None:
        return not strict
    return any(isinstance(value, c) for c in classes
               if not (strict and c is _CALLABLE))


def _unknown(cls: type, name: str, params: dict[str, inspect.Parameter]) -> str:
    # Python's own words first
    head = f"{cls.__name__}.__init__() got an unexpected keyword argument {name!r}"
    if name in _BECAME:
        return f"{head}: pass {_BECAME[name]}."
    field = _RENAMED.get(name, name)
    for arg, p in params.items():
        default = p.default
        if _is_settings(default) and field in {f.name for f in dataclasses.fields(default)}:
            kind = type(default).__name__
            return (f"{head}: it is a field of {kind}, the {arg}= argument's settings; pass "
                    f"{arg}={kind}({field}=...).")
    close = difflib.get_close_matches(name, list(params), n=1)
    return head + (f"; did you mean {close[0]}=?" if close else
                   f"; its arguments: {', '.join(params)}.")
