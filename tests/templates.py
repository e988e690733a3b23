"""The one YAML case template the harness's tests write their small cases from."""

from __future__ import annotations

CASE = """\
behavior: {behavior}
summary: {summary}
upstream: [{upstream}]
devices: [cpu]
backends: [aot_eager]
inputs:
{inputs}
program: |
{program}
{extra}"""


def case_text(*, behavior: str = "runtime_wrapper", summary: str = "s", inputs: str = "  x: {tensor: {shape: [4]}}",
              program: str = "  def f(x):\n      return x.sin()", extra: str = "",
              upstream: str = "https://github.com/pytorch/pytorch/pull/179600") -> str:
    return CASE.format(behavior=behavior, summary=summary, inputs=inputs, program=program, extra=extra,
                       upstream=upstream)
