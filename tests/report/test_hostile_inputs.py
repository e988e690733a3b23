"""The report trusts no input: results files come from downloaded CI artifacts.

Every malformed shape is `file:line: ...` with exit status 2 and no traceback; an empty input is
never a green report; a record's reproducer path is read only from inside the reproducers folder
beside its results; the report never overwrites what it reads; run manifests say which cells
ran nothing for a stated reason (the device is absent, the run was narrowed) and which runs were
cut short.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.report import merge, write_report
from conformance.results import ManifestItem, RunManifest, write_manifest
from tests.helpers.records import changed, full_build, record, write_results

BUILD = "2.13.0+cpu@cf30153c4c13"


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["report", *args])
    out, err = capsys.readouterr()
    return code, out + err


def _line(rec: dict[str, object]) -> str:
    return json.dumps(rec) + "\n"


def _good() -> dict[str, object]:
    return json.loads(full_build("2.13.0")[0].to_json_line())


# ----------------------------------------------------------------------------- empty inputs


@pytest.mark.parametrize("text", ["", "\n\n   \n"])
def test_an_empty_results_file_is_an_input_error_not_a_green_report(text: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "r.jsonl"
    empty.write_text(text)
    code, out = _report(capsys, str(empty), "-o", str(tmp_path / "out"))
    assert code == 2 and f"{empty}:1: no records" in out, out
    assert not (tmp_path / "out").exists()
    good = write_results(tmp_path / "good.jsonl", full_build("2.13.0"))
    assert main(["report", "diff", str(good), str(empty)]) == 2
    assert f"{empty}:1: no records" in capsys.readouterr().err


# ----------------------------------------------------------------------------- malformed shapes


def _deep(n: int) -> str:
    return "[" * n + "]" * n


MALFORMED = {
    "deep JSON": (lambda: '{"schema": "torch-conformance.result/2", "x": ' + _deep(100_000) + "}\n",
                  "JSON nested too deeply"),
    "NaN": (lambda: _line(_good()).replace('"total": 1.25', '"total": NaN'), "NaN is not JSON"),
    "Infinity": (lambda: _line(_good()).replace('"total": 1.25', '"total": Infinity'), "Infinity is not JSON"),
    "probes as a list": (lambda: _line({**_good(), "probes": [1, 2]}), "invalid record: probes"),
    "probe entry without a status": (lambda: _line({**_good(), "probes": {"results": [{"behavior": "x"}]}}),
                                     "invalid record: probes.results.0.status"),
    "unknown probe status": (lambda: _line({**_good(), "probes": {"results": [{"behavior": "x",
                                                                                "status": "maybe"}]}}),
                             "invalid record: probes.results.0.status"),
    "a 250-character torch version": (lambda: _line({**_good(), "fingerprint": {"torch_version": "2." + "9" * 248}}),
                                      "invalid record: fingerprint.torch_version"),
    "mismatches as strings": (lambda: _line({**_good(), "mismatches": ["out[0] differs"]}),
                              "invalid record: mismatches.0"),
    "a JSON list line": (lambda: "[1, 2]\n", "a JSON list, not a record object"),
    "a JSON string line": (lambda: '"hello"\n', "a JSON str, not a record object"),
    "a huge reason": (lambda: _line({**_good(), "reason": "x" * 300_000}), "invalid record: reason"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_each_malformed_shape_is_file_line_and_exit_2(name: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    make, phrase = MALFORMED[name]
    path = tmp_path / "r.jsonl"
    path.write_text(_line(_good()) + make())
    code, out = _report(capsys, str(path), "-o", str(tmp_path / "out"))
    assert code == 2, out
    assert f"{path}:2: " in out and phrase in out, out
    assert "Traceback" not in out
    assert main(["report", "diff", str(path), str(path)]) == 2
    assert "Traceback" not in "".join(capsys.readouterr())


def test_compat_json_is_strict_json_and_says_every_run(tmp_path: Path) -> None:
    recs = [*full_build("2.13.0")]
    path = write_results(tmp_path / "r.jsonl", recs)
    write_manifest(path, RunManifest(results="r.jsonl", started="2026-11-01T00:00:00+00:00",
                                     finished="2026-11-01T00:01:00+00:00", exit_status=0, narrowed=False,
                                     items=tuple(ManifestItem(case_id=r.case_id, variant=r.variant,
                                                              behavior=r.behavior, device=r.device) for r in recs)))
    write_report(merge([path]), tmp_path / "out")
    text = (tmp_path / "out" / "compat.json").read_text()
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in compat.json"))
    assert [r["source"] for r in doc["runs"]] == [str(path)] and doc["runs"][0]["build"] == BUILD
    # and a compat.json read back keeps what its runs said
    again = merge([tmp_path / "out" / "compat.json"])
    assert [r.manifest for r in again.runs] == [r.manifest for r in merge([path]).runs]


# ----------------------------------------------------------------------------- reproducer paths


def _with_reproducer(tmp_path: Path, ref: str) -> Path:
    rec = record("runtime_wrapper/a", status="fail", reproducer=ref)
    others = [r for r in full_build("2.13.0") if r.case_id != rec.case_id]
    return write_results(tmp_path / "run" / "results.jsonl", [*others, rec])


@pytest.mark.parametrize("ref", ["/etc/passwd", "../../../etc/os-release", "reproducers/../../secret.py",
                                 "reproducers/link.py"])
def test_a_record_cannot_make_the_report_copy_a_file_from_outside_its_reproducers(
        ref: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _with_reproducer(tmp_path, ref)
    (tmp_path / "secret.py").write_text("SECRET = 1\n")
    folder = results.parent / "reproducers"
    folder.mkdir()
    (folder / "link.py").symlink_to(tmp_path / "secret.py")
    code, _ = _report(capsys, str(results), "-o", str(tmp_path / "out"))
    assert code == 1  # the failing item; its script is simply not linked
    copied = list((tmp_path / "out").rglob("*.py"))
    assert copied == [], copied
    assert "SECRET" not in (tmp_path / "out" / "index.html").read_text()


def test_a_hard_link_in_the_reproducers_folder_is_not_copied(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    results = _with_reproducer(tmp_path, "reproducers/hard.py")
    (tmp_path / "secret.py").write_text("SECRET = 1\n")
    folder = results.parent / "reproducers"
    folder.mkdir()
    os.link(tmp_path / "secret.py", folder / "hard.py")
    _report(capsys, str(results), "-o", str(tmp_path / "out"))
    assert list((tmp_path / "out").rglob("*.py")) == []


@pytest.mark.parametrize("where", ["reproducers", "reproducers/2.13.0-cpu", "issue-drafts"])
def test_the_report_neither_writes_nor_removes_through_a_link_in_its_output_folder(
        where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _with_reproducer(tmp_path, "reproducers/x.py")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.py").write_text("KEEP = 1\n")
    (elsewhere / "precious.md").write_text("keep\n")
    link = tmp_path / "out" / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    code, err = _report(capsys, str(results), "-o", str(tmp_path / "out"))
    assert code == 2 and "is a symbolic link" in err, err
    assert sorted(p.name for p in elsewhere.iterdir()) == ["precious.md", "precious.py"]


def test_a_reproducer_inside_its_folder_is_copied_and_linked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    results = _with_reproducer(tmp_path, "run/reproducers/runtime_wrapper__a__cpu-aot_eager-inference.py")
    folder = results.parent / "reproducers"
    folder.mkdir()
    (folder / "runtime_wrapper__a__cpu-aot_eager-inference.py").write_text("print('repro')\n")
    monkeypatch.chdir(tmp_path)  # the record names it relative to where the run started
    _report(capsys, str(results), "-o", str(tmp_path / "out"))
    (copy,) = (tmp_path / "out" / "reproducers").rglob("*.py")
    assert copy.read_text() == "print('repro')\n"
    assert stat.S_IMODE(copy.stat().st_mode) & 0o044 == 0o044  # readable by others, as any report file
    # a second report over the first one's compat.json, into the same folder, keeps its copy
    assert main(["report", str(tmp_path / "out" / "compat.json"), "-o", str(tmp_path / "out")]) == 1
    assert copy.read_text() == "print('repro')\n"
    doc = json.loads((tmp_path / "out" / "compat.json").read_text())
    assert [r["reproducer_link"] for r in doc["records"] if r["status"] == "fail"] == [
        copy.relative_to(tmp_path / "out").as_posix()]


def test_the_report_refuses_to_write_into_the_folder_of_its_inputs(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    results = _with_reproducer(tmp_path, "reproducers/x.py")
    (results.parent / "reproducers").mkdir()
    (results.parent / "reproducers" / "x.py").write_text("print(1)\n")
    code, out = _report(capsys, str(results), "-o", str(results.parent))
    assert code == 2 and "that folder holds the inputs" in out, out
    assert (results.parent / "reproducers" / "x.py").is_file()
    assert not (results.parent / "compat.json").exists()



def test_an_output_that_is_a_file_or_expectations_that_are_a_folder_are_usage_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """-o naming a file exited 3 (the full-disk status); --expectations naming a folder said
    'no such results file' (it is an expectations file that is wanted)."""
    results = _with_reproducer(tmp_path, "reproducers/x.py")
    a_file = tmp_path / "report.txt"
    a_file.write_text("mine\n")
    code, out = _report(capsys, str(results), "-o", str(a_file))
    assert code == 2 and "a file, not a folder" in out, out
    assert a_file.read_text() == "mine\n"
    code, out = _report(capsys, str(results), "--expectations", str(tmp_path), "-o", str(tmp_path / "out"))
    assert code == 2 and f"--expectations: {tmp_path} (a folder, not an expectations file)" in out, out
    assert "results file" not in out, out


def test_a_record_written_twice_into_one_results_file_is_an_input_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One run writes each item once: a second record of an item in one file means two runs wrote it
    (or a hand edited it), and the report said nothing and exited 0."""
    records = full_build("2.13.0")
    path = write_results(tmp_path / "r.jsonl", [*records, records[3]])
    code, out = _report(capsys, str(path), "-o", str(tmp_path / "out"))
    assert code == 2, out
    assert f"{path}:{len(records) + 1}: a second record of {records[3].case_id} [{records[3].variant}] (the first " \
           "is line 4)" in out, out
    assert not (tmp_path / "out").exists()
    # the same item in two files (two shards, a rerun) is an overlap, not an error: the latest is kept
    assert main(["report", str(write_results(tmp_path / "a.jsonl", records)),
                 str(write_results(tmp_path / "b.jsonl", records[3:4])), "-o", str(tmp_path / "out2")]) == 0


def test_records_of_two_harness_versions_in_one_build_are_named(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    records = full_build("2.13.0")
    older = [changed(r, fingerprint={**r.fingerprint.model_dump(), "harness_version": "0.0.9"}) for r in records[:2]]
    path = write_results(tmp_path / "r.jsonl", [*older, *records[2:]])
    code, out = _report(capsys, str(path), "-o", str(tmp_path / "out"))
    assert code == 0, out
    assert "records of 2 harness versions (0.0.9, 0.1.0)" in out, out
    problems = json.loads((tmp_path / "out" / "compat.json").read_text())["problems"]
    assert [p["kind"] for p in problems] == ["mixed-harness"]


# ----------------------------------------------------------------------------- manifests


def _manifest_for(path: Path, records: list, *, narrowed: bool = False, finished: bool = True,
                  extra: tuple[ManifestItem, ...] = ()) -> None:
    items = tuple(ManifestItem(case_id=r.case_id, variant=r.variant, behavior=r.behavior, device=r.device)
                  for r in records)
    write_manifest(path, RunManifest(results=path.name, started="2026-11-01T00:00:00+00:00",
                                     finished="2026-11-01T00:01:00+00:00" if finished else None,
                                     exit_status=0 if finished else None, narrowed=narrowed,
                                     selection={"--devices": "cpu"} if narrowed else {}, items=items + extra))


def test_cells_whose_device_is_absent_here_are_not_an_alarm(tmp_path: Path) -> None:
    cpu = full_build("2.13.0")
    cuda = [record(r.case_id, "cuda-aot_eager-inference", "skip", reason="device cuda: torch.cuda.is_available() is "
                   "False on this machine", skip_kind="device") for r in cpu]
    path = write_results(tmp_path / "r.jsonl", [*cpu, *cuda])
    _manifest_for(path, [*cpu, *cuda])
    report = merge([path])
    assert {c.verdict for c in report.cells() if c.device == "cuda"} == {"unavailable"}
    assert report.exit_code() == 0 and not report.empty_cells()
    bad, note = report.headline()
    assert bad == "" and note.startswith("5 cell(s) not available here: no cuda device"), note
    write_report(report, tmp_path / "out")
    assert "| mutation_epilogue | **all pass** 2 pass | **not available here** 2 skip |" in (
        tmp_path / "out" / "compat.md").read_text()


def test_a_cell_skipped_for_another_reason_is_still_an_error(tmp_path: Path) -> None:
    recs = [r for r in full_build("2.13.0") if r.behavior != "scalar_recompile"]
    recs.append(record("scalar_recompile/a", status="skip", reason="functorch.compile.aot_function is not available",
                       skip_kind="feature"))
    path = write_results(tmp_path / "r.jsonl", recs)
    _manifest_for(path, recs)
    report = merge([path])
    assert [c.behavior for c in report.empty_cells()] == ["scalar_recompile"]
    assert report.exit_code() == 1


def test_a_narrowed_run_gates_only_on_what_it_selected(tmp_path: Path) -> None:
    only = [r for r in full_build("2.13.0") if r.behavior == "mutation_epilogue"]
    path = write_results(tmp_path / "r.jsonl", only)
    _manifest_for(path, only, narrowed=True)
    report = merge([path])
    assert report.exit_code() == 0
    assert {c.behavior: c.verdict for c in report.cells()} == {
        "mutation_epilogue": "pass", "runtime_wrapper": "not-selected", "subclass_wrapper": "not-selected",
        "backward_unwrap": "not-selected", "scalar_recompile": "not-selected"}
    # the same records from a run that did not narrow: four behaviours ran nothing, for no stated reason
    _manifest_for(path, only, narrowed=False)
    assert len(merge([path]).empty_cells()) == 4


def test_a_run_cut_short_accounts_for_every_item_it_selected(tmp_path: Path) -> None:
    recs = full_build("2.13.0")
    path = write_results(tmp_path / "r.jsonl", recs[:7])  # the process died during the 8th
    _manifest_for(path, recs, finished=False)
    report = merge([path])
    assert len(report.records) == 10
    missing = [s.record for s in report.records if s.record.status == "error"]
    assert [r.case_id for r in missing] == ["backward_unwrap/b", "scalar_recompile/a", "scalar_recompile/b"]
    assert all("ended before this item finished" in r.reason for r in missing)
    assert report.exit_code() == 1 and [p.kind for p in report.problems] == ["run-cut-short"]


def test_a_malformed_manifest_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "r.jsonl", full_build("2.13.0"))
    path.with_name("r.manifest.json").write_text('{"schema": "torch-conformance.run/1", "items": 3}')
    code, out = _report(capsys, str(path), "-o", str(tmp_path / "out"))
    assert code == 2 and "r.manifest.json:1: invalid run manifest" in out, out


# ----------------------------------------------------------------------------- published schemas


@pytest.mark.parametrize(("of", "path"), [("result", "schemas/result.schema.json"),
                                          ("manifest", "schemas/manifest.schema.json"),
                                          ("bench", "schemas/bench.schema.json"),
                                          ("findings", "schemas/findings.schema.json"),
                                          ("compat", "schemas/compat.schema.json")])
def test_the_published_json_schemas_are_current(of: str, path: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).parents[2]
    assert main(["schema", "--of", of, "--check", str(root / path)]) == 0, capsys.readouterr().err


def test_records_validate_against_the_published_schema_and_malformed_ones_do_not() -> None:
    import jsonschema

    root = Path(__file__).parents[2]
    schema = json.loads((root / "schemas" / "result.schema.json").read_text())
    good = json.loads(record("runtime_wrapper/a", status="fail").to_json_line())
    jsonschema.validate(good, schema)
    for broken in ({**good, "probes": [1]}, {**good, "status": "maybe"}, {**good, "colour": "red"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


def test_a_report_the_disk_cannot_take_says_so_and_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from conformance.report import write

    results = write_results(tmp_path / "run" / "results.jsonl", full_build("2.13.0"))

    def full(path: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(write, "write_atomic", full)
    code, err = _report(capsys, str(results), "-o", str(tmp_path / "out"))
    assert code == 3 and "could not be written (No space left on device)" in err, err
    assert "Traceback" not in err


def _report_child(tmp_path: Path, path: Path) -> tuple[int, str, float]:
    """The report in a child process: (exit status, stderr, peak memory in GiB)."""
    script = ("import resource, subprocess, sys\n"
              "p = subprocess.run([sys.executable, '-m', 'conformance', 'report', sys.argv[1], '-o', sys.argv[2]], "
              "capture_output=True, text=True)\n"
              "print(p.returncode); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
              "print(p.stderr, file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "out")], capture_output=True,
                         text=True, timeout=600, check=False)
    code, kib = (int(x) for x in out.stdout.split())
    return code, out.stderr, kib / (1 << 20)


def test_a_gzip_bomb_and_a_flood_of_records_are_refused_within_bounded_memory(tmp_path: Path) -> None:
    import zlib

    bomb = tmp_path / "compat.json.gz"
    pack = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b" " * (1 << 24)
    with bomb.open("wb") as f:
        f.write(pack.compress(b'{"schema": "torch-conformance.compat/1", "records": ['))
        for _ in range(40):  # 640 MiB of blanks
            f.write(pack.compress(chunk))
        f.write(pack.flush())
    code, err, peak = _report_child(tmp_path, bomb)
    assert code == 2 and "over 512 MiB" in err, err
    assert peak < 1.5, peak  # GiB: the input is read up to its bound, never whole
    flood = tmp_path / "flood.jsonl"
    flood.write_text("{}\n" * 1_000_000)
    code, err, peak = _report_child(tmp_path, flood)
    assert code == 2 and "over 200,000 lines" in err, err
    assert peak < 0.5, peak
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"not deflate at all" * 10)
    code, err, _ = _report_child(tmp_path, broken)
    assert code == 2 and "damaged gzip file" in err and "Traceback" not in err, err


def test_junk_after_a_gzip_stream_is_refused_not_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import gzip

    good = tmp_path / "r.jsonl.gz"
    good.write_bytes(gzip.compress(_line(_good()).encode()))
    code, out = _report(capsys, str(good), "-o", str(tmp_path / "ok"))
    assert code != 2 and "wrote" in out, out  # read: its verdict is the record's
    appended = tmp_path / "a.jsonl.gz"
    appended.write_bytes(good.read_bytes() + b"junk that is no gzip")
    code, out = _report(capsys, str(appended), "-o", str(tmp_path / "out"))
    assert code == 2 and "20 byte(s) after the end of the gzip stream" in out, out


def test_control_characters_in_a_downloaded_record_leave_junit_xml_well_formed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import xml.etree.ElementTree as ET

    rec = _good()
    rec.update(case_id="mutation_epilogue/esc\x1b[31m\x00x", variant="aot_eager-\x07", status="fail", reason="r\x0b")
    (tmp_path / "r.jsonl").write_text(_line(rec))
    assert _report(capsys, str(tmp_path / "r.jsonl"), "-o", str(tmp_path / "out"))[0] == 1
    suite = ET.parse(tmp_path / "out" / "junit.xml").getroot().find("testsuite")  # noqa: S314  # the report's own output
    assert suite is not None and suite.find("testcase[@name='aot_eager-?']") is not None
