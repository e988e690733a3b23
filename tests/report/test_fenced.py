"""Text from a record, a program or a captured output goes into Markdown code blocks that nothing in
it can close: a program with a fence and raw HTML after it stays code in findings.md and the drafts."""

from __future__ import annotations

from conformance.explore.findings import to_markdown
from conformance.report.words import fenced

HOSTILE = 'def f(x):\n    """\n```\n<script>alert(1)</script>\n<iframe src="x"></iframe>\n````"""\n    return x\n'


def _blocks(markdown: str) -> list[tuple[str, str]]:
    """(fence, body) of each code block, read as a Markdown renderer reads them (a closing fence is
    a line of at least as many backticks as the opening one, and nothing else)."""
    out, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fence = line[:len(line) - len(line.lstrip("`"))]
            j = i + 1
            while j < len(lines) and not (lines[j].startswith(fence) and lines[j].strip("`") == ""):
                j += 1
            out.append((fence, "\n".join(lines[i + 1:j])))
            i = j + 1
        else:
            i += 1
    return out


def test_a_fence_inside_the_text_does_not_close_the_block() -> None:
    block = fenced(HOSTILE, "python")
    assert _blocks(block) == [(block.split("python")[0], HOSTILE.rstrip())]


def test_a_findings_report_keeps_a_hostile_program_inside_its_block() -> None:
    finding = {"signature": "s", "where": "s", "count": 1, "found_after_s": 1.0, "programs_before": 1,
               "variant": "cpu-aot_eager-inference", "statements": 1,
               "program": HOSTILE, "mismatches": [], "reason": "", "case": "findings/x.yaml",
               "reproducer": "", "case_yaml": "program: x\n", "reproduces": True, "known_by": ["a"]}
    report = {"torch": "2.13.0", "backends": ["aot_eager"], "modes": ["inference"], "seed": 0, "shard": "1/1",
              "parts": 1, "seconds": 1.0, "programs": 1, "eager_rejected": 0, "valid_share": 1.0,
              "programs_per_hour": 1, "compile_share": 0.0, "torch_share": 0.0, "flaky": [], "findings": [finding],
              "crashes": [], "known_from": "r.jsonl", "interrupted": False, "worker_errors": []}
    text = to_markdown(report)
    outside = "\n".join(line for line in text.splitlines() if not any(
        line in body.splitlines() for _, body in _blocks(text)))
    assert "<script>" not in outside and "<iframe" not in outside
    assert any(HOSTILE.rstrip() == body for _, body in _blocks(text))
