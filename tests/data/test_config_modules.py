"""A case's `config:` names a flag of any torch config module, `torch.<...>.config` or `torch.<...>._config`
(torch.fx.experimental._config, where upstream's symbol_guard_limit_before_specialize lives): it validates,
is patched for the run (and in the reproducer), a misspelt flag of it is the usual line error, and a name
that is neither form is refused."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from conformance.core.compile import config_flag, split_config_key
from conformance.data.deep_check import checker
from conformance.data.loader import CaseLoadError, LoadedCase, load_case
from conformance.data.variants import Variant
from conformance.reproducer.entry_lines import config_lines
from conformance.run.runner import run_variant

HEAD = """\
behavior: scalar_recompile
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
devices: [cpu]
backends: [eager]
inputs:
  x: {tensor: {shape: [4]}}
program: |
  def f(x):
      import torch.fx.experimental._config as fx_config
      return x * fx_config.symbol_guard_limit_before_specialize
"""


def _load(tmp_path: Path, config: str) -> LoadedCase:
    path = tmp_path / "cases" / "c.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEAD + textwrap.dedent(config))
    return load_case(path, tmp_path / "cases", display="c.yaml", check=checker(backends=True))


def test_a_flag_of_an_underscore_config_module_validates_and_is_patched_on_both_sides(tmp_path: Path) -> None:
    lc = _load(tmp_path, """\
        config:
          torch.fx.experimental._config.symbol_guard_limit_before_specialize: 3
        """)
    module, flag = config_flag("torch.fx.experimental._config.symbol_guard_limit_before_specialize")
    assert (module.__name__, flag) == ("torch.fx.experimental._config", "symbol_guard_limit_before_specialize")
    before = module.symbol_guard_limit_before_specialize
    record = run_variant(lc, Variant("cpu", "eager", "inference"))
    assert record.status == "pass", record.reason
    assert module.symbol_guard_limit_before_specialize == before  # patched for the case only
    assert config_lines(lc.data["config"]) == [
        "import torch.fx.experimental._config",
        "torch.fx.experimental._config.symbol_guard_limit_before_specialize = 3"]


def test_a_misspelt_flag_of_it_is_a_line_error(tmp_path: Path) -> None:
    with pytest.raises(CaseLoadError) as exc:
        _load(tmp_path, """\
            config:
              torch.fx.experimental._config.symbol_guard_limit_before_specialise: 3
            """)
    assert [str(e) for e in exc.value.errors] == [
        f"c.yaml:13: config.torch.fx.experimental._config.symbol_guard_limit_before_specialise: no such flag in this "
        f"build (torch {torch.__version__}); did you mean symbol_guard_limit_before_specialize?; a run skips the "
        "case with this reason"]


def test_a_module_named_otherwise_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CaseLoadError) as exc:
        _load(tmp_path, """\
            config:
              torch.jit._monkeytype_config.flag: 1
            """)
    assert "is not a dotted torch config name (torch.<...>.config.<flag> or torch.<...>._config.<flag>)" in str(
        exc.value.errors[0])


@pytest.mark.parametrize(("key", "split"), [
    ("torch._dynamo.config.specialize_float", ("torch._dynamo.config", "specialize_float")),
    ("torch._inductor.config.triton.cudagraphs", ("torch._inductor.config", "triton.cudagraphs")),
    ("torch.fx.experimental._config.no_data_dependent_graph_break",
     ("torch.fx.experimental._config", "no_data_dependent_graph_break")),
])
def test_a_key_splits_at_its_first_config_segment(key: str, split: tuple[str, str]) -> None:
    assert split_config_key(key) == split
