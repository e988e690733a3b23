"""reference_impl must import only public torch API (issue 3, acceptance)."""

from __future__ import annotations

import ast
from pathlib import Path

import reference_impl

PACKAGE = Path(reference_impl.__file__).parent


def private_torch_imports(source: str) -> list[str]:
    """Every ``torch._*`` (or ``torch.testing._internal``) module imported by ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
            "__import__",
            "import_module",
        ):
            names = [
                a.value
                for a in node.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
        for name in names:
            parts = name.split(".")
            if parts[0] in ("torch", "functorch") and any(p.startswith("_") for p in parts[1:]):
                found.append(name)
    return found


def test_reference_impl_imports_only_public_torch() -> None:
    modules = sorted(PACKAGE.glob("**/*.py"))
    assert len(modules) >= 8, modules
    offenders = {m.name: private_torch_imports(m.read_text()) for m in modules}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_scanner_catches_a_planted_private_import(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import torch\n"
        "from torch._functorch._aot_autograd import runtime_wrappers\n"
        "import torch._dynamo.config as cfg\n"
        "from torch.utils import _pytree\n"
        "__import__('torch._C')\n"
    )
    found = private_torch_imports(planted.read_text())
    assert found == [
        "torch._functorch._aot_autograd",
        "torch._functorch._aot_autograd.runtime_wrappers",
        "torch._dynamo.config",
        "torch.utils._pytree",
        "torch._C",
    ]
