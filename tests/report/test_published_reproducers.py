"""A published report (`report --publish`): every build's reproducers, each script stored once, and
nothing of the machine that made it (no absolute path of its folders, its home, its packages)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from conformance.cli import main
from tests.helpers.records import full_build, record, write_results

# an absolute path in a folder a machine keeps its work, temporary files or homes in (not a URL's path)
ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?:tmp|work|home|root|Users|usr|opt|var)/[^\s\"'<>]*")


def _build(tmp_path: Path, build: str, scripts: dict[str, str], reason: str = "") -> Path:
    """A results file of `build` whose known failures name their scripts by absolute path, as a run writes them."""
    folder = tmp_path / build
    (folder / "reproducers").mkdir(parents=True)
    recs = [r for r in full_build(build) if r.case_id not in scripts]
    for case_id, text in scripts.items():
        script = folder / "reproducers" / f"{case_id.replace('/', '__')}__cpu-aot_eager-inference.py"
        script.write_text(text)
        recs.append(record(case_id, status="xfail", build=build, reproducer=str(script),
                           reason=reason or "out[0]: values is [2.0], but eager gives [1.0]",
                           known_failure={"source": str(tmp_path / "expect.yaml") + ":3",
                                          "link": "https://github.com/pytorch/pytorch/issues/1", "reason": "known"}))
    return write_results(folder / "results.jsonl", recs)


def _published(out: Path) -> dict[str, str]:
    texts = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        texts[path.relative_to(out).as_posix()] = (gzip.decompress(data) if path.suffix == ".gz" else data).decode()
    return texts


def test_every_builds_reproducers_are_published_each_script_once(tmp_path: Path) -> None:
    same = "print('the same program on every build')\n"
    old = _build(tmp_path, "2.13.0", {"runtime_wrapper/a": same, "runtime_wrapper/b": "print('2.13.0 only')\n"})
    new = _build(tmp_path, "2.14.1", {"runtime_wrapper/a": same, "runtime_wrapper/b": "print('2.14.1 only')\n"})
    out = tmp_path / "published"
    assert main(["report", str(old), str(new), "--publish", "-o", str(out), "--exit-zero"]) == 0
    doc = json.loads(gzip.decompress((out / "compat.json.gz").read_bytes()))
    links = {(r["build"].split("+")[0], r["case_id"]): r["reproducer_link"] for r in doc["records"]
             if r["status"] == "xfail"}
    assert len(links) == 4 and all(links.values()), links  # the older build's known failures too
    assert links["2.13.0", "runtime_wrapper/a"] == links["2.14.1", "runtime_wrapper/a"]  # one file for both
    assert links["2.13.0", "runtime_wrapper/b"] != links["2.14.1", "runtime_wrapper/b"]
    scripts = sorted(p.relative_to(out).as_posix() for p in (out / "reproducers").rglob("*.py"))
    assert scripts == sorted(set(links.values())), scripts
    assert (out / links["2.13.0", "runtime_wrapper/a"]).read_text() == same


def test_a_published_report_names_no_path_of_the_machine_that_made_it(tmp_path: Path) -> None:
    home = Path.home()
    traceback = (f'File "{home}/venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 5\n'
                 'File "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", line 9\n'
                 'RuntimeError: see /tmp/torchinductor_root/ab/cab.py')
    script = f"# written in {tmp_path}\nprint('x')\n"
    old = _build(tmp_path, "2.13.0", {"runtime_wrapper/a": script}, reason=traceback)
    new = _build(tmp_path, "2.14.1", {"runtime_wrapper/a": script}, reason=traceback)
    out = tmp_path / "published"
    assert main(["report", str(old), str(new), "--publish", "-o", str(out), "--exit-zero"]) == 0
    texts = _published(out)
    assert {"compat.json.gz", "compat.md", "index.html"} <= set(texts) and any(
        name.startswith("reproducers/") for name in texts), sorted(texts)
    for name, text in texts.items():
        for needle in (str(tmp_path), str(home) + "/"):
            assert needle not in text, (name, text[max(0, text.find(needle) - 200):text.find(needle) + 200])
        found = ABSOLUTE.search(text)
        assert found is None, (name, text[max(0, found.start() - 200):found.end() + 200])
    doc = json.loads(texts["compat.json.gz"])  # still JSON, and says where a package's frame was
    rec = next(r for r in doc["records"] if r["status"] == "xfail")
    assert "torch/_dynamo/eval_frame.py" in rec["reason"] and "https://github.com/pytorch/pytorch/issues/1" in (
        texts["compat.json.gz"])
    assert [i["path"] for i in doc["inputs"]] == ["2.13.0/results.jsonl", "2.14.1/results.jsonl"]


@pytest.mark.parametrize(("text", "public"), [
    ("/work/r4/2.15.0/results.jsonl:12", "2.15.0/results.jsonl:12"),
    ("see https://github.com/pytorch/pytorch/blob/v2.13.0/torch/x.py", "see https://github.com/pytorch/pytorch/blob/v2.13.0/torch/x.py"),
    ('"/work/venvs/t215/lib/python3.11/site-packages/torch/a.py\\n"', '"torch/a.py\\n"'),
    ("</div> cases/a/b.yaml 1/2", "</div> cases/a/b.yaml 1/2"),
])
def test_a_machine_path_is_written_as_its_tail_and_nothing_else_is_touched(text: str, public: str) -> None:
    from conformance.report.write import public_text

    assert public_text(text) == public
