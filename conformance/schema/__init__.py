"""The case schema (v2; a v1 file is a v2 file): the declarative form of one conformance case.

Every model is frozen and forbids unknown keys, so a typo in a case file is an error that
names the key and lists the valid ones (see `conformance.data.loader`). `cases/schema.json` is
exported from these models (`torch-conformance schema --write`) for editors.
"""

from conformance.schema.calls import RaisesSpec
from conformance.schema.case import Case, ExpectSpec, json_schema
from conformance.schema.common import INPUT_KINDS, MODES, SCHEMA_VERSION, Backend, Behavior, DType, Mode
from conformance.schema.compiling import CompileSpec
from conformance.schema.inputs import (
    InnerSpec,
    InputSpec,
    ModuleSpec,
    ParameterSpec,
    ScalarSpec,
    TensorSpec,
    TwoTensorSpec,
)
from conformance.schema.known import BuildCondition, Covers, Divergence, KnownFailure, KnownFailureKind

__all__ = [
    "INPUT_KINDS",
    "MODES",
    "SCHEMA_VERSION",
    "Backend",
    "Behavior",
    "BuildCondition",
    "Case",
    "CompileSpec",
    "Covers",
    "DType",
    "Divergence",
    "ExpectSpec",
    "InnerSpec",
    "InputSpec",
    "KnownFailure",
    "KnownFailureKind",
    "Mode",
    "ModuleSpec",
    "ParameterSpec",
    "RaisesSpec",
    "ScalarSpec",
    "TensorSpec",
    "TwoTensorSpec",
    "json_schema",
]
