"""Program features, and which of them each behaviour's reference models.

The reference was written from the upstream changes for the programs they describe; a program
that uses a feature a behaviour's reference does not model gets the probe result ``not-modelled``
(naming the feature), never a divergence the reference cannot stand behind. ``MODELS`` says, per
behaviour, which features its reference models; ``features_of`` reads a program's features from its
eager call, through public API only. (The scalar fix's reference models float uses, not features:
``FloatUseKind`` says which uses it does not follow.)
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any

import numpy as np
import torch

from reference_impl.subclass_wrapper import is_wrapper_subclass

__all__ = ["MODELS", "Feature", "features_of", "not_modelled"]


class Feature(str, Enum):
    """What a program does that a reference may or may not model (the value says it in words)."""

    SUBCLASS_VALUES = "tensor subclass inputs or outputs"
    NESTED_TENSORS = "nested (jagged) tensors"
    CUSTOM_FUNCTIONS = "custom autograd Functions"
    NUMPY_VALUES = "NumPy values, which dynamo turns into tensors inside the graph"


_EVERY = frozenset({Feature.SUBCLASS_VALUES, Feature.NESTED_TENSORS, Feature.CUSTOM_FUNCTIONS})
MODELS: dict[str, frozenset[Feature]] = {
    # each references the program's outputs and inputs as eager gave them: a NumPy value is a tensor
    # in the graph but not in the program, so its slots, aliasing and dynamic dims are not modelled
    "mutation_epilogue": _EVERY,
    "runtime_wrapper": _EVERY,
    "subclass_wrapper": _EVERY,
    "backward_unwrap": _EVERY,
}


def _leaves(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if isinstance(v, list | tuple):
            out += _leaves(v)
        elif isinstance(v, dict):
            out += _leaves(v.values())
        else:
            out.append(v)
    return out


def features_of(args: Iterable[Any], outputs: Iterable[Any]) -> frozenset[Feature]:
    """The features a program's call shows, from its arguments and outputs (as eager ran it)."""
    values = _leaves([*args, *outputs])
    found: set[Feature] = set()
    for v in values:
        if isinstance(v, np.ndarray | np.generic):
            found.add(Feature.NUMPY_VALUES)
        if not isinstance(v, torch.Tensor):
            continue
        if v.is_nested:
            found.add(Feature.NESTED_TENSORS)
        if is_wrapper_subclass(v):
            found.add(Feature.SUBCLASS_VALUES)
        grad_fn: object = v.grad_fn  # a Node to the stubs, a BackwardCFunction for a custom Function
        if isinstance(grad_fn, torch.autograd.function.BackwardCFunction):
            found.add(Feature.CUSTOM_FUNCTIONS)
    return frozenset(found)


def not_modelled(found: frozenset[Feature], models: frozenset[Feature]) -> str:
    """The features the program shows that a reference modelling ``models`` does not ('' if none)."""
    return "; ".join(f.value for f in sorted(found - models, key=lambda f: f.name))
