"""The report against generated inputs, as for case files (tests/data/test_hostile_cases.py): results
files of many records, some of them broken at any field (another type, a missing or unknown key, a
hostile string, a huge number, a torn line), and compat.json documents broken the same way. Whatever
the input, the report either writes a whole report (exit 0 or 1) or refuses it as `file:line: ...`
(exit 2): never a traceback, never a partial folder, never raw HTML from a record in its Markdown,
and within bounded memory."""

from __future__ import annotations

import gzip
import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.cli import main
from tests.helpers.records import full_build, record

STATUSES = ("pass", "fail", "xfail", "skip", "error")
HOSTILE = st.sampled_from([
    "<script>alert(1)</script>", "</details><iframe src=x>", "```\n# not a heading", "\x00\x1b[31mred", "a|b|c",
    "x" * 20_000, "../../../../etc/passwd", "\u202egnp.exe", "\\<script>", "`<b>`", "", " ", "\ud800"[:0] + "é"])
SCALAR = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
          | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20) | HOSTILE)
JSON = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=3), max_leaves=8)
MAX_PEAK = 256 << 20
TAG = re.compile(r"(?<!\\)<(script|iframe)", re.IGNORECASE)


def _records(data: st.DataObject) -> list[dict[str, Any]]:
    """Up to 40 well-formed records per build (one or two builds), every status, each of its own item,
    and every behaviour's cell run at least once (else the report's 'no case ran' is the only news)."""
    out = []
    behaviours = [r.behavior for r in full_build("2.13.0")[::2]]
    for build in data.draw(st.sampled_from([("2.13.0",), ("2.13.0", "2.14.1")]), label="builds"):
        for i in range(data.draw(st.integers(min_value=len(behaviours), max_value=40), label="records")):
            status = data.draw(st.sampled_from(STATUSES), label="status")
            extra = {"reason": "skipped here", "skip_kind": "feature"} if status == "skip" else {}
            case = f"{behaviours[i % len(behaviours)]}/c{i}"
            rec = record(case, "cpu-aot_eager-inference", "pass" if status in ("xfail", "error") else status, build,
                         **extra)
            doc = json.loads(rec.to_json_line())
            if status == "error":
                doc.update(status="error", reason="RuntimeError: boom")
            out.append(doc)
    return out


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path into a JSON document (so a mutation can land anywhere, nested included)."""
    found: list[tuple[Any, ...]] = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:5]):
            found += _paths(v, (*prefix, i))
    return found


def _mutate(doc: Any, data: st.DataObject) -> Any:
    paths = _paths(doc)
    if not paths:
        return data.draw(JSON, label="whole")
    path = data.draw(st.sampled_from(paths), label="path")
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    how = data.draw(st.sampled_from(["replace", "drop", "extra", "hostile"]), label="how")
    last = path[-1]
    if how == "drop" and isinstance(parent, dict):
        del parent[last]
    elif how == "extra" and isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=8), label="key")] = data.draw(JSON, label="value")
    elif how == "hostile" and isinstance(parent[last], str):
        parent[last] = parent[last] + data.draw(HOSTILE, label="text")
    else:
        parent[last] = data.draw(JSON, label="value")
    return doc


def _report(inputs: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, int]:
    tracemalloc.start()
    try:
        code = main(["report", *map(str, inputs), "-o", str(out)])
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    captured = capsys.readouterr()
    return code, captured.out + captured.err, peak


def _check(code: int, said: str, peak: int, inputs: list[Path], out: Path) -> None:
    assert "Traceback" not in said, said
    assert peak < MAX_PEAK, f"{peak >> 20} MiB"
    if code == 2:
        assert not out.exists(), "a refused input left a report folder"
        first = said.strip().splitlines()[0]
        assert any(first.startswith(f"report: {p}:") for p in inputs) or "no records" in first, first
        return
    assert code in (0, 1), said
    assert {p.name for p in out.iterdir()} >= {"compat.json", "compat.md", "index.html"}
    for md in out.rglob("*.md"):
        prose = re.sub(r"^(`{3,})[^\n]*\n.*?^\1$", "", md.read_text(), flags=re.MULTILINE | re.DOTALL)
        prose = re.sub(r"(`+).+?\1", "", prose)
        assert not TAG.search(prose), f"{md}: raw HTML from a record"


@settings(max_examples=4 * settings.default.max_examples, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_results_file_is_a_whole_report_or_a_file_line_error(
        data: st.DataObject, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("hostile")
    docs = _records(data)
    lines = [json.dumps(d) for d in docs]
    for _ in range(data.draw(st.integers(min_value=0, max_value=3), label="broken")):
        k = data.draw(st.integers(min_value=0, max_value=len(lines) - 1), label="which")
        if data.draw(st.booleans(), label="torn"):
            lines[k] = lines[k][: data.draw(st.integers(min_value=0, max_value=len(lines[k])), label="cut")]
        else:
            lines[k] = json.dumps(_mutate(docs[k], data))
    text = "\n".join(lines) + "\n"
    path = folder / "results.jsonl"
    if data.draw(st.booleans(), label="gzipped"):
        path = folder / "results.jsonl.gz"
        path.write_bytes(gzip.compress(text.encode("utf-8", "surrogatepass")))
    else:
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
    code, said, peak = _report([path], folder / "out", capsys)
    _check(code, said, peak, [path], folder / "out")


@pytest.fixture(scope="module")
def compat_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real report's compat.json: failures with drafts, two builds."""
    folder = tmp_path_factory.mktemp("compat")
    recs = [*full_build("2.13.0"), *full_build("2.14.1"), record("runtime_wrapper/c", status="fail", build="2.14.1")]
    path = folder / "r.jsonl"
    path.write_text("".join(r.to_json_line() for r in recs))
    assert main(["report", str(path), "-o", str(folder / "out")]) == 1
    doc: dict[str, Any] = json.loads((folder / "out" / "compat.json").read_text())
    return doc


@settings(max_examples=2 * settings.default.max_examples, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_compat_json_is_a_whole_report_or_a_file_line_error(
        data: st.DataObject, compat_doc: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("hostile_compat")
    doc = json.loads(json.dumps(compat_doc))
    for _ in range(data.draw(st.integers(min_value=1, max_value=3), label="broken")):
        doc = _mutate(doc, data)
    path = folder / "compat.json"
    path.write_text(json.dumps(doc))
    code, said, peak = _report([path], folder / "out", capsys)
    _check(code, said, peak, [path], folder / "out")
