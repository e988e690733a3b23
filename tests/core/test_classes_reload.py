"""Each variant loads the case's classes block as a module of its own name: a frame compiled after a reset used to
build a class of the earlier variant's module of the same name, so a returned object's type differed from eager's
on every variant after the first (a false fail; measured on 2.13 and 2.15)."""

from __future__ import annotations

from pathlib import Path

from conformance.data.variants import Variant
from conformance.run.runner import run_variant
from tests.helpers.cases import case_factory

CASE = """\
behavior: subclass_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/176741]
devices: [cpu]
backends: [eager, aot_eager]
compile: {fullgraph: true}
classes: |
  HANDLED = {}

  class Foo:
      def __init__(self, foo):
          self.foo = foo

      def __eq__(self, other):
          return type(other).__name__ == "Foo" and other.foo == self.foo

      __hash__ = object.__hash__

      @classmethod
      def __torch_function__(cls, func, types, args=(), kwargs=None):
          if func not in HANDLED:
              return NotImplemented
          return HANDLED[func](*args, **(kwargs or {}))

  def stack_foos(input, dim=0, *, out=None):
      return Foo(sum(v.foo for v in input))

  HANDLED[torch.stack] = stack_foos
inputs:
  v0: {view: "Foo(1)"}
  v1: {view: "Foo(2)"}
program: |
  def f(v0, v1):
      return torch.stack([v0, v1])
"""


def test_a_class_the_compiled_frame_builds_is_this_variants_on_every_variant_in_one_process(tmp_path: Path) -> None:
    lc = case_factory(tmp_path)(CASE, name="reloaded.yaml")
    for backend in ("eager", "eager", "aot_eager", "aot_eager"):
        record = run_variant(lc, Variant("cpu", backend, "inference"))
        assert record.status == "pass", (backend, [m.message() for m in record.mismatches])
