"""The keys this round added to cases (first_call, expect.compiles_at_most, generated's no_match, line_counts and
instance: all) refuse bad values as `file:line: field: message`, the case's other fields untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.data.loader import CaseLoadError, load_case

BASE = """\
behavior: runtime_wrapper
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/181271]
devices: [cpu]
backends: [aot_eager]
inputs:
  x: {tensor: {shape: [3]}}
program: |
  def f(x):
      return x * 2
"""


@pytest.mark.parametrize(("extra", "where"), [
    ("first_call:\n  after: |\n    out +=\n", "c.yaml:13: first_call.after: invalid syntax"),
    ("first_call:\n  fresh: true\n", "c.yaml:12: first_call.fresh: unknown key 'fresh'"),
    ("first_call:\n  raises: {type: RuntimeError, at: after}\n", "c.yaml:12: first_call.raises: "),
    ("expect: {compiles_at_most: -1}\n", "c.yaml:11: expect.compiles_at_most: "),
    ("generated:\n  - artifact: dynamo_graph_node_meta\n    line_counts: {'(open': 1}\n",
     "c.yaml:13: generated[0].line_counts: not a regular expression"),
    ("generated:\n  - artifact: dynamo_graph_node_meta\n    no_match: ['[bad']\n",
     "c.yaml:13: generated[0].no_match: not a regular expression"),
    ("generated:\n  - artifact: dynamo_graph_node_meta\n    line_counts: {'^call': 100001}\n",
     "c.yaml:13: generated[0].line_counts.^call: "),
    ("generated:\n  - artifact: aot_forward_graph\n    instance: all\n    graph: 'def forward(self): return ()'\n",
     "instance: all reads every instance's text as one"),
])
def test_a_bad_value_of_a_new_key_is_a_line_error(tmp_path: Path, extra: str, where: str) -> None:
    path = tmp_path / "runtime_wrapper" / "c.yaml"
    path.parent.mkdir()
    path.write_text(BASE + extra)
    with pytest.raises(CaseLoadError) as info:
        load_case(path, tmp_path, display="c.yaml")
    (error,) = [str(e) for e in info.value.errors]
    assert where in error, error
