"""A run's filters: names the harness declares pass without asking torch; any other is looked up."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conformance.data.selection import DECLARED_BACKENDS, check_selection


def test_declared_names_are_checked_without_importing_torch() -> None:
    script = textwrap.dedent("""
        import sys
        from conformance.data.selection import DECLARED_BACKENDS, check_selection
        assert check_selection(["cpu", "cuda"], DECLARED_BACKENDS, ["inference", "training"]) == []
        assert "torch" not in sys.modules, "the check imported torch"
        assert check_selection([], ["indcutor"], []) != []  # any other name is looked up on the build
        assert "torch" in sys.modules
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]


def test_undeclared_names_are_still_held_to_the_build() -> None:
    assert "aot_eager" in DECLARED_BACKENDS and "cudagraphs" not in DECLARED_BACKENDS
    assert check_selection(["cpu:0", "xpu"], ["cudagraphs"], []) == []  # names this build knows
    (backend, device) = check_selection(["gpu"], ["aot_eagre"], [])
    assert backend.startswith("--backends aot_eagre: not a torch.compile backend registered on this build")
    assert "(did you mean aot_eager?)" in backend
    assert device.startswith("--devices gpu: 'gpu' is not a device this torch build knows")
