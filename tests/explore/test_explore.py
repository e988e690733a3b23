"""The explorer: its programs are valid cases, its control finds nothing, a seeded fault is found,
shrunk and handed back as a case file that fails the same way, and its signatures ignore names."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.cli import main
from conformance.data.loader import load_case
from conformance.explore.emit import emit
from conformance.explore.engine import Explorer, signature_of
from conformance.explore.findings import mark_known, merge_into, to_markdown, write_findings, write_report
from conformance.explore.findings_file import FindingsFile
from conformance.explore.grammar import Program, programs
from conformance.explore.supervise import Budget, Config, _run_case, supervise, totals_report, worker_main
from conformance.results import MismatchRecord, ProbeRecord, ProbeResult, ResultRecord
from conformance.selftest.faults import FAULTS


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=programs())
def test_every_program_is_a_case_the_loader_accepts(program: Program, tmp_path: Path) -> None:
    explorer = Explorer(tmp_path)
    from conformance.explore.engine import case_text

    lc = explorer.load(case_text(program))  # raises CaseLoadError with file:line if the grammar wrote garbage
    assert lc.case.program.startswith("def f(")
    # up to three tensors (or TwoTensors), a view of one, a module and its optimizer
    assert len(program.statements) <= 8 and 1 <= len([i for i in program.inputs if not i.hidden]) <= 6


def test_the_control_finds_nothing(tmp_path: Path) -> None:
    """Both sides eager (`none`): whatever the explorer reports is its own bug."""
    # a count of programs, not seconds: on a loaded machine a time budget would explore fewer
    explorer = Explorer(tmp_path, backends=("none",), time_budget=600, max_examples=60, seed=3)
    assert explorer.explore() == {}
    assert explorer.stats.programs == 60
    assert explorer.stats.rejected < explorer.stats.programs * 0.6  # most programs are valid


@pytest.mark.parametrize("fault", ["input_mutation_dropped", "alias_returned_as_copy", "grad_mode_left_changed"])
def test_a_seeded_fault_is_found_shrunk_and_reproduced_by_its_case_file(fault: str, tmp_path: Path) -> None:
    explorer = Explorer(tmp_path, backends=("none",), extensions=(FAULTS[fault].extension(),), time_budget=20, seed=1)
    found = explorer.explore()
    assert found, f"{fault}: nothing found in {explorer.stats.programs} programs"
    finding = min(found.values(), key=lambda f: f.found_after)
    emitted = emit(explorer, finding)
    assert emitted.reproduces, emitted
    assert len(emitted.program.statements) <= 6
    load_case(Path(emitted.case_path), Path(emitted.case_path).parent)  # the case file validates
    script = Path(emitted.reproducer_path).read_text()
    assert script.startswith(('"""', "#"))
    assert f"From findings/{Path(emitted.case_path).name}." in script and str(tmp_path) not in script, script
    report = write_findings(explorer, [emitted])
    assert report["findings"][0]["reproduces"] is True
    assert (tmp_path / "findings.md").read_text().count("## 1.") == 1


def test_without_a_fault_a_finding_of_the_control_would_show(tmp_path: Path) -> None:
    """The control's silence is not blindness: the same explorer and budget, with a fault, finds."""
    explorer = Explorer(tmp_path, backends=("none",), extensions=(FAULTS["version_not_bumped"].extension(),),
                        time_budget=600, max_examples=60, seed=3)
    assert explorer.explore()


@pytest.mark.slow
def test_a_sweep_that_recompiles_on_every_value_is_found_with_the_count_in_its_case(tmp_path: Path) -> None:
    """A sweep's compile count is checked against the reference's prediction (with the fix) where
    the program compiles one region; the finding's case expects that count, so that the runner's
    own check fails it again."""
    explorer = Explorer(tmp_path, backends=("aot_eager",), modes=("inference",),
                        extensions=(FAULTS["recompile_every_value"].extension(),), time_budget=30, seed=1)
    counts = [f for f in explorer.explore().values() if "graphs compiled" in f.signature]
    assert counts, f"nothing found in {explorer.stats.programs} programs"
    emitted = emit(explorer, counts[0])
    assert emitted.reproduces, emitted
    case = load_case(Path(emitted.case_path), Path(emitted.case_path).parent).case
    assert case.expect.compiles == emitted.compiles is not None


SWEPT = """version: 2
behavior: scalar_recompile
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179395]
inputs:
  a: {tensor: {shape: [4]}}
  lr: {scalar: {type: float, values: [0.1, 0.5, 1.5]}}
program: |
  def f(a, lr):
      return a * lr
backends: [aot_eager, none]
modes: [inference]
"""


@pytest.mark.parametrize(
    ("backend", "first_call", "graphs", "expected"),
    [
        ("aot_eager", 1, 3, 2),  # one region, a graph per value: the reference predicts 2
        ("aot_eager", 1, 2, None),  # as predicted
        ("aot_eager", 2, 4, None),  # a graph break: two regions, the prediction is per region
        ("aot_eager", 0, 0, None),  # nothing compiled
        ("none", 0, 0, None),  # nothing to count
    ],
)
def test_a_sweeps_count_is_checked_only_where_the_reference_predicts_it(
    backend: str, first_call: int, graphs: int, expected: int | None, tmp_path: Path
) -> None:
    from conformance.explore.engine import sweep_expectation

    lc = Explorer(tmp_path).load(SWEPT)
    record = _record(status="pass").model_copy(update={
        "backend": backend, "compile_counts": {"cold_graphs": graphs, "cold_first_call": first_call}})
    assert sweep_expectation(lc, [record]) == expected


def _record(*mismatches: tuple[str, str, str, str], status: str = "fail") -> ResultRecord:
    return ResultRecord.model_validate({
        "case_id": "x", "behavior": "mutation_epilogue", "device": "cpu", "backend": "aot_eager",
        "mode": "inference", "variant": "cpu-aot_eager-inference", "status": status,
        "mismatches": [MismatchRecord(check=c, path=w, expected=e, actual=a)
                       for c, w, e, a in mismatches],
    })


def test_a_signature_is_the_cause_not_the_names() -> None:
    one = _record(("values", "input a", "1", "2"), ("values", "call 2: out[1]", "1", "2"))
    two = _record(("values", "input b", "3", "4"), ("values", "out[0]", "5", "6"))
    other = _record(("stride", "input a", "(1,)", "(2,)"))
    assert signature_of(one) == signature_of(two) == "torch.compile | values | an input | differs"
    assert signature_of(other) != signature_of(one)
    raised = _record(("exception", "call", "no exception", "IndexError: list index out of range"))
    assert "IndexError: list index out of range" in signature_of(raised)
    # one outer type, two inner causes: two findings (they were one when the outer type was the key)
    expand = _record(("exception", "call", "no exception", "BackendCompilerFailed: backend='aot_eager' raised: "
                                                            "(caused by RuntimeError: expand: sizes (2, 3) too few)"))
    set_ = _record(("exception", "call", "no exception", "BackendCompilerFailed: backend='aot_eager' raised: "
                                                          "(caused by AssertionError: set_ on a view)"))
    assert signature_of(expand) != signature_of(set_)


def test_a_program_with_two_causes_is_two_discrepancies_whichever_comes_first() -> None:
    from conformance.explore.engine import Ran, signatures_of

    both = _record(("structure", "outputs", "tuple(*, *)", "list(*, *)"), ("values", "grad of la", "1", "2"))
    swapped = _record(*reversed([("structure", "outputs", "tuple(*, *)", "list(*, *)"),
                                 ("values", "grad of la", "1", "2")]))
    assert signatures_of(both) == ["torch.compile | structure | the outputs | differs",
                                   "torch.compile | values | an input's gradient | differs"]
    ran = Ran(None, "", [swapped])  # type: ignore[arg-type]  # the program is not read
    assert set(ran.discrepancies()) == set(signatures_of(both))


def test_an_undeclared_probe_divergence_on_a_passing_program_is_a_finding_of_its_own() -> None:
    from conformance.explore.engine import Ran

    def passing(declared: str) -> ResultRecord:
        return _record(status="pass").model_copy(update={"probes": ProbeRecord(results=(ProbeResult(
            "runtime_wrapper", "diverges", (), "--- reference\n+++ build\n-captured inputs: {0: args[0]}\n"
            "+captured inputs: {}", declared=declared),))})

    ran = Ran(None, "", [passing("")])  # type: ignore[arg-type]  # the program is not read
    assert list(ran.discrepancies()) == ["internals probe: runtime_wrapper diverges from the reference on captured "
                                         "inputs"]
    declared = Ran(None, "", [passing("benign https://github.com/pytorch/pytorch/pull/1 at x.yaml:3")])  # type: ignore[arg-type]
    assert declared.discrepancies() == {}


def test_the_cli_refuses_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "-o", str(tmp_path), "--fault", "no_such_fault"]) == 2
    assert "no such fault" in capsys.readouterr().err
    assert main(["explore", "-o", str(tmp_path), "--backends", "no_such_backend"]) == 2
    assert main(["explore", "-o", str(tmp_path), "--time-budget", "0"]) == 2
    in_the_way = tmp_path / "a_file"
    in_the_way.write_text("not a folder")
    capsys.readouterr()
    assert main(["explore", "-o", str(in_the_way), "--backends", "none", "--time-budget", "1"]) == 2
    assert f"-o {in_the_way}: cannot be the output folder" in capsys.readouterr().err
    assert in_the_way.read_text() == "not a folder"


def test_the_cli_writes_findings_and_exits_by_them(tmp_path: Path) -> None:
    out = tmp_path / "control"
    assert main(["explore", "-o", str(out), "--backends", "none", "--time-budget", "3", "-q"]) == 0
    report = json.loads((out / "findings.json").read_text())
    assert report["findings"] == [] and report["programs"] > 0
    faulty = tmp_path / "fault"
    assert main(["explore", "-o", str(faulty), "--backends", "none", "--time-budget", "8", "-q",
                 "--fault", "input_mutation_dropped"]) == 1
    assert json.loads((faulty / "findings.json").read_text())["findings"]


def test_an_exploration_leaves_no_file_per_program(tmp_path: Path) -> None:
    out = tmp_path / "control"
    assert main(["explore", "-o", str(out), "--backends", "none", "--time-budget", "600", "--max-examples", "20",
                 "-q"]) == 0
    programs = json.loads((out / "findings.json").read_text())["programs"]
    files = [p for p in out.rglob("*") if p.is_file() and "hypothesis" not in p.parts]
    assert programs == 20
    assert len(files) <= 3, files  # findings.json, findings.md, the worker's state.json


def test_the_report_says_so_when_no_corpus_results_were_compared(tmp_path: Path) -> None:
    head = {"torch": "2.13.0", "backends": ["none"], "modes": ["inference"], "seed": 0, "programs": 9, "seconds": 1,
            "programs_per_hour": 1, "valid_share": 1.0, "findings": [], "flaky": []}
    assert "not compared with the corpus's known failures" in to_markdown(head)
    assert "unlike any of the corpus's known failures" in to_markdown({**head, "known_from": "results.jsonl"})


def test_a_finding_is_rerun_on_other_builds_and_told_history_when_a_newer_one_passes(tmp_path: Path) -> None:
    """--builds: the seeded fault lives in this process only, so the same torch in a child process
    (given as a build by the folder that holds it) passes the finding's case file."""
    import torch

    from conformance.explore.releases import FAILS, PASSES, history, in_words

    faulty = tmp_path / "fault"
    site = str(Path(torch.__file__).parent.parent)
    assert main(["explore", "-o", str(faulty), "--backends", "none", "--time-budget", "8", "-q",
                 "--fault", "input_mutation_dropped", "--builds", site]) == 1
    found = json.loads((faulty / "findings.json").read_text())["findings"]
    assert found and all(PASSES in f["releases"].values() for f in found), [f["releases"] for f in found]
    assert "Builds: " in (faulty / "findings.md").read_text()
    assert history("2.13.0", {"2.13.0": FAILS, "2.15.0": PASSES})
    assert not history("2.13.0", {"2.13.0": FAILS, "2.14.1": PASSES, "2.15.0": FAILS})
    assert not history("2.15.0", {"2.10.0": PASSES, "2.15.0": FAILS})  # an older build passing: a regression
    assert in_words({"2.10.0": PASSES, "2.15.0": FAILS}) == "fails on 2.15.0; passes on 2.10.0"
    assert main(["explore", "-o", str(tmp_path / "x"), "--builds", str(tmp_path)]) == 2  # no torch there


@pytest.mark.slow
def test_a_fixed_seed_smoke_run_under_aot_eager_hands_back_only_findings_that_reproduce(tmp_path: Path) -> None:
    """What CI runs on every build: a short fixed-seed exploration of the real compiler. Whatever it
    finds on this build, each finding's emitted case file must fail the same way again."""
    explorer = Explorer(tmp_path, backends=("aot_eager",), time_budget=60, seed=0)
    found = explorer.explore()
    assert explorer.stats.programs >= 20
    emitted = [emit(explorer, f) for f in found.values()]
    assert all(f.reproduces for f in emitted), [f.signature for f in emitted if not f.reproduces]
    assert all(len(f.program.statements) <= 8 for f in emitted)


def _dies_on_its_third_program(config: Config, worker: int, first_round: int, budget: Budget) -> None:
    """A worker whose build segfaults on the third program of its first life (in the worker process)."""
    if first_round == 0:
        ran = Explorer.run
        count = [0]

        def run(self: Explorer, program: Program) -> Any:
            count[0] += 1
            if count[0] == 3:
                os.kill(os.getpid(), signal.SIGSEGV)
            return ran(self, program)

        Explorer.run = run  # type: ignore[method-assign]  # this process only: it is the worker
    worker_main(config, worker, first_round, budget)


def _dies_again(case: str, fault: str | None) -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


@pytest.mark.parametrize("confirm", [_run_case, _dies_again])
def test_a_worker_that_dies_costs_the_program_it_ran_and_nothing_else(confirm: Any, tmp_path: Path) -> None:
    config = Config(out=str(tmp_path), backends=("none",), modes=("inference",), fault="input_mutation_dropped",
                    time_budget=240, max_examples=40, seed=0, float_sweeps=True)
    totals, _ = supervise(config, target=_dies_on_its_third_program, confirm=confirm)
    assert list(totals.crashes) == ["crash SIGSEGV"]
    crash = totals.crashes["crash SIGSEGV"]
    assert crash["reproduces"] is (confirm is _dies_again), crash["rerun"]
    assert "def f(" in crash["program"] and Path(crash["case"]).is_file()
    assert 2 < totals.programs <= 40 and totals.findings, "the worker was not started again after its crash"
    report = totals_report(config, totals, 25.0)
    write_report(tmp_path, report)
    assert "crash SIGSEGV" in (tmp_path / "findings.md").read_text()
    assert (tmp_path / report["crashes"][0]["case"]).is_file()


def test_an_interrupted_exploration_keeps_what_it_found(tmp_path: Path) -> None:
    """Ctrl-C (or a cancelled CI job's SIGTERM) while a finding is being shrunk: the findings seen so far
    are written, the one not yet shrunk as first seen, and the status says interrupted."""
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "conformance", "explore", "-o", str(out), "--backends", "none",
                             "--time-budget", "300", "-q", "--fault", "input_mutation_dropped", "-n", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        states = [json.loads(p.read_text() or "{}") for p in out.glob("shards/*/state.json")]
        if any(s.get("findings") for s in states):
            break
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    text, _ = proc.communicate(timeout=200)
    assert proc.returncode == 130, text
    report = json.loads((out / "findings.json").read_text())
    assert report["interrupted"] and report["findings"] and report["programs"] > 0
    assert "Interrupted" in (out / "findings.md").read_text()


def test_a_finding_not_yet_shrunk_when_interrupted_is_kept_as_first_seen(tmp_path: Path) -> None:
    class StopAtFirstFinding(Explorer):
        def _body(self, program: Program) -> None:
            try:
                super()._body(program)
            except AssertionError:
                self.stopping = True  # as the worker's SIGINT handler does
                raise

    explorer = StopAtFirstFinding(tmp_path, backends=("none",),
                                  extensions=(FAULTS["input_mutation_dropped"].extension(),), time_budget=60, seed=1)
    found = explorer.explore()
    assert explorer.interrupted and len(found) == 1
    assert next(iter(found.values())).shrunk is False


def _part(root: Path, signature: str, statements: int, programs: int) -> tuple[Path, dict[str, Any]]:
    (root / "findings").mkdir(parents=True)
    (root / "findings" / f"{root.name}.yaml").write_text("# a case\n")
    finding = {"signature": signature, "statements": statements, "found_after_s": 1.0, "case":
               f"findings/{root.name}.yaml", "reproducer": "", "program": "def f(a): ...", "mismatches": [],
               "variant": "cpu-aot_eager-inference", "programs_before": 1, "reproduces": True, "reason": "",
               "case_yaml": "# a case\n"}
    return root, {"torch": "x", "backends": ["aot_eager"], "modes": ["inference"], "seed": 0,
                  "seconds": 10.0 + programs, "programs": programs, "eager_rejected": 1, "flaky": ["s"],
                  "findings": [finding], "crashes": []}


def _merged(out: Path, parts: list[tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """The parts merged as `explore --merge` reads them: checked."""
    return merge_into(out, [(root, FindingsFile.model_validate(doc)) for root, doc in parts])


def test_shards_merge_into_one_report_one_finding_per_signature(tmp_path: Path) -> None:
    parts = [_part(tmp_path / "a", "same", 4, 100), _part(tmp_path / "b", "same", 2, 50),
             _part(tmp_path / "c", "other", 3, 10)]
    report = _merged(tmp_path / "merged", parts)
    assert report["programs"] == 160 and report["eager_rejected"] == 3 and report["seconds"] == 110.0
    kept = {f["signature"]: f for f in report["findings"]}
    assert set(kept) == {"same", "other"} and kept["same"]["statements"] == 2  # the shorter program
    assert (tmp_path / "merged" / kept["same"]["case"]).read_text() == "# a case\n"
    assert kept["same"]["case"] == "findings/b.yaml"
    assert {"real_code", "kinds", "shrunk"}.isdisjoint(kept["other"])  # the keys its file had, no defaults added


def test_merge_groups_keys_an_older_run_wrote_as_todays_normalisation_does(tmp_path: Path) -> None:
    """A findings.json of an older run keeps the program's guard text, or a key cut at a length before
    a later normalisation shortened it: merged, each is one finding with today's key."""
    head = "torch.compile | exception | the call | compiled raises where eager does not | AssertionError: "
    guard = head + "Guard failed. Guard fail reason: N/N: "
    parts = [_part(tmp_path / "a", guard + "a.size()(?) != N # (x.py:N)", 4, 10),
             _part(tmp_path / "b", guard + "c.stride()(?) <= N # a.mul_(N)", 2, 10),
             _part(tmp_path / "c", head + "modified: [torch.FloatTensor (?)], which is output N of Clamp, is at vers",
                   3, 10),
             _part(tmp_path / "d", head + "modified: [torch.FloatTensor []] is at version N; expected", 3, 10),
             _part(tmp_path / "e", head + "another message", 1, 10)]
    report = _merged(tmp_path / "merged", parts)
    kept = {f["signature"]: f for f in report["findings"]}
    one = head + "Guard failed. Guard fail reason: ?"
    assert sorted(kept) == sorted([one, head + "modified: [?] is at vers", head + "another message"]), kept
    assert kept[one]["statements"] == 2 and kept[one]["seen"] == 2


def test_the_cli_merges_shards_and_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    parts = (_part(tmp_path / "a", "same", 4, 100), _part(tmp_path / "b", "other", 1, 5))
    for shard, (root, report) in enumerate(parts):  # shards 1/2 and 2/2 of one exploration
        (root / "findings.json").write_text(json.dumps({**report, "shard": f"{shard + 1}/2"}))
    out = tmp_path / "merged"
    assert main(["explore", "--merge", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(out),
                 "--known", str(tmp_path / "none.jsonl")]) == 2  # a --known file that is not there
    assert main(["explore", "--merge", str(tmp_path / "a"), str(tmp_path / "nowhere"), "-o", str(out)]) == 2
    assert main(["explore", "--shard", "3/2", "-o", str(out)]) == 2
    assert main(["explore", "--merge", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(out)]) == 1
    assert len(json.loads((out / "findings.json").read_text())["findings"]) == 2


def test_a_finding_that_a_known_failure_shows_the_same_way_is_marked_known(tmp_path: Path) -> None:
    def record(case_id: str, status: str, where: str) -> ResultRecord:
        return ResultRecord(case_id=case_id, variant="cpu-aot_eager-inference", status=status,
                            mismatches=(MismatchRecord(check="storage_offset", path=where, expected="3", actual="0"),))

    results = tmp_path / "results.jsonl"
    results.write_text("".join(r.to_json_line() for r in (
        record("mutation_epilogue/known_one", "xfail", "input a"),
        record("mutation_epilogue/passing", "pass", "input a"),
        record("mutation_epilogue/elsewhere", "xfail", "out[0]"))))
    known = signature_of(record("x", "fail", "input b"))
    report: dict[str, Any] = {"torch": "2.13.0", "findings": [
        {"signature": known, "where": known, "statements": 1},
        {"signature": "torch.compile | stride | an input | differs", "where":
         "torch.compile | stride | an input | differs", "statements": 1}]}
    mark_known(report, results)
    assert [f["known_by"] for f in report["findings"]] == [["mutation_epilogue/known_one"], []]
    assert "**Probably known**" in to_markdown({**report, "backends": [], "modes": [], "seed": 0, "programs": 1,
                                       "seconds": 1, "programs_per_hour": 1, "valid_share": 1.0, "flaky": [],
                                       "findings": [{**report["findings"][0], "variant": "v", "found_after_s": 0,
                                                     "programs_before": 0, "reproduces": True, "program": "",
                                                     "mismatches": [], "reason": "", "case": "", "case_yaml": "",
                                                     "reproducer": ""}]})


@pytest.mark.parametrize(("doc", "message"), [
    ("[1, 2]", "document: Input should be an object"),
    ('{"findings": "x"}', "findings: Input should be a valid array"),
    ('{"findings": [{"statements": 1}]}', "findings[0].signature: Field required"),
    ('{"findings": [{"signature": "s", "statements": "many", "found_after_s": 1}]}',
     "findings[0].statements: Input should be a valid integer"),
    ('{"programs": "lots", "findings": []}', "programs: Input should be a valid integer"),
    ('{"crashes": [{"count": 1}]}', "crashes[0].signature: Field required"),
])
def test_a_findings_file_that_explore_did_not_write_is_refused_by_merge(
        doc: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "part").mkdir()
    (tmp_path / "part" / "findings.json").write_text(doc)
    assert main(["explore", "--merge", str(tmp_path / "part"), "-o", str(tmp_path / "out")]) == 2
    assert f"findings.json: {message}" in capsys.readouterr().err
    assert not (tmp_path / "out" / "findings.json").exists()


def test_merge_copies_no_file_from_outside_the_folder_it_merges(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("not a finding\n")
    root, report = _part(tmp_path / "a", "same", 1, 10)
    report["findings"][0]["case"] = str(secret)  # an absolute path, and a relative one that climbs out
    report["findings"][0]["reproducer"] = "../secret.yaml"
    merged = _merged(tmp_path / "merged", [(root, report)])
    assert merged["findings"][0]["case"] == "" and merged["findings"][0]["reproducer"] == ""
    assert not (tmp_path / "merged" / "findings" / "secret.yaml").exists()


def test_coverage_draws_every_ingredient_and_mostly_valid_programs(capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.explore import coverage as cov

    drawn = cov.coverage(2000, seed_=0, run=False)  # drawing is cheap: enough programs that every dtype shows
    assert drawn["below_1_percent"] == [], drawn["below_1_percent"]
    assert {"inplace", "metadata", "view", "functional", "storage"} <= set(drawn["families"])
    assert drawn["families"]["inplace"]["registry_ops_drawn"] >= 50, drawn["families"]
    doc = cov.coverage(400, seed_=0)
    assert doc["valid_share"] >= 0.7 and doc["eager_crashed"] == 0, doc
    # the gate fails where an ingredient is never drawn
    monkeypatch.setattr(cov, "EXPECTED", (*cov.EXPECTED, "statement:never_drawn"))
    assert main(["explore", "--coverage", "20"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("drawn in under 1 % of programs: ") and "statement:never_drawn" in last, last


def test_reductions_drop_an_unused_sweep_input_call_and_context() -> None:
    from conformance.explore.grammar import Call, Input, Statement

    x, unused = Input("a", (4,), False, True, "contiguous"), Input("b", (4,), False, True, "contiguous")
    program = Program((x, unused), (Statement("mul_lr", "a"), Statement("mul_", "a", context="torch.no_grad()")),
                      ("a",), sweep=(0.1, 0.5), calls=(Call("again"),), grad_enabled=False)
    smaller = list(program.reductions())
    assert replace_sweep(program) in smaller
    assert any(p.inputs == (x,) for p in smaller)  # b is named nowhere
    assert any(p.calls == () for p in smaller) and any(p.grad_enabled for p in smaller)
    assert any(p.statements[-1].context is None and len(p.statements) == 2 for p in smaller)
    assert all(p.inputs[0] == x for p in smaller if len(p.inputs) == 1)  # a is used: never dropped


def replace_sweep(program: Program) -> Program:
    from dataclasses import replace

    return replace(program, sweep=None, statements=program.statements[1:])


def test_later_calls_re_alias_the_inputs_as_the_case_file_says() -> None:
    from dataclasses import replace

    from conformance.explore.grammar import Call, Input, Statement

    a, b = Input("a", (4,), False, True, "contiguous"), Input("b", (4,), False, True, "contiguous")
    base = Input("base", (6,), False, True, "contiguous", hidden=True)
    program = Program((base, a, b), (Statement("add_alpha", "a", "b"),), ("a",),
                      calls=(Call("alias_same"), Call("alias_overlap"), Call("layout"), Call("bigger")))
    calls = program.case()["calls"]
    assert calls[0] == {"b": {"view": "a"}}
    assert calls[1] == {"a": {"view": "base[:4]"}, "b": {"view": "base[2:6]"}}  # [0, 4) and [2, 6) overlap
    assert calls[2] == {}  # no other layout for a 1-d tensor
    assert calls[3] == {n: {"tensor": {"shape": [6]}} for n in ("a", "b")}  # bigger: both, the base as it was
    a2, b2 = replace(a, shape=(2, 2)), replace(b, shape=(2, 2))
    square = Program((base, a2, b2), (), ("a",), calls=(Call("alias_overlap"),))
    assert square.case()["calls"] == [{"a": {"view": "base[:4].view(2, 2)"}, "b": {"view": "base[2:6].view(2, 2)"}}]


def test_a_finding_written_before_a_normalisation_still_matches_its_cause_on_another_build() -> None:
    """A findings.json keeps the key of the code that wrote it; a rerun reads both keys the same way."""
    from conformance.explore.releases import FAILS, PASSES, outcome

    raised = _record(("exception", "call", "no exception",
                      "AssertionError: input 0 (a) and input 1 (b) share storage but are not views"))
    old_key = ("torch.compile | exception | the call | compiled raises where eager does not | "
               "AssertionError: input N (a) and input N (b) share storage but are not views")
    assert old_key != signature_of(raised)  # today's key leaves the names out
    assert outcome(old_key, [raised]) == FAILS
    assert outcome(old_key, [_record(status="pass")]) == PASSES
    # a message cut to its length before a normalisation shortened it: the same cause, up to the cut
    node = _record(("exception", "call", "no exception", "RuntimeError: modified by an inplace operation, which is "
                    "output 0 of torch::autograd::CopySlices, is at version 3; expected version 2 instead"))
    assert outcome("torch.compile | exception | the call | compiled raises where eager does not | RuntimeError: "
                   "modified by an inplace operation, which is output N of ClampN, is at vers", [node]) == FAILS
    assert outcome(old_key, [_record(("values", "out[0]", "1", "2"))]).startswith("fails otherwise: ")


INFERENCE_STEP = """version: 2
behavior: mutation_epilogue
summary: s
upstream: [https://github.com/pytorch/pytorch/pull/179600]
inputs:
  m: {module: {class: torch.nn.Linear, args: [4, 4]}, persist: true}
  opt: {optimizer: {class: torch.optim.SGD, params: m, kwargs: {lr: 0.1, momentum: 0.9}}}
program: |
  def f(m, opt):
      m.weight.grad = torch.ones_like(m.weight)
      opt.step()
backends: [none, aot_eager]
modes: [inference]
inference_mode: true
calls: [{}]
"""


def test_an_optimizer_stepped_under_inference_mode_is_no_harness_error(tmp_path: Path) -> None:
    """Its momentum buffers are inference tensors, which have no version counter to read (the 2.15.0
    control found the harness reading one)."""
    explorer = Explorer(tmp_path)
    records = [r for _, r in explorer.records(explorer.load(INFERENCE_STEP))]
    assert records and all(r.status == "pass" for r in records), [(r.variant, r.status, r.reason) for r in records]


@pytest.mark.parametrize(("subclass", "ingredient"), [("TwoTensor", "two_tensor"),
                                                      ("nested TwoTensor", "nested_two_tensor"),
                                                      ("MyTwo", "user_subclass")])
def test_a_wrapper_subclass_input_is_built_as_drawn_and_shrinks_towards_a_plain_tensor(
        subclass: str, ingredient: str, tmp_path: Path) -> None:
    """A TwoTensor, a TwoTensor of TwoTensors, or a user's subclass (its class in the case's classes
    block): each builds as that type, and shrinking offers the simpler input (a plain TwoTensor, then
    a plain tensor)."""
    from dataclasses import replace

    from conformance.core.build import Env, build_inputs, load_classes
    from conformance.explore.engine import case_text
    from conformance.explore.grammar import Input, Statement

    a = Input("a", (3, 4), True, True, "contiguous", subclass=subclass)
    program = Program((a,), (Statement("mul_", "a"), Statement("fresh_sin", "a", out="v1")), ("v1",))
    lc = Explorer(tmp_path).load(case_text(program))
    env = Env(dict(load_classes(lc.case.classes, "<classes>")))
    built = build_inputs(lc.data, "cpu", "training", None, env).named["a"]
    assert type(built).__name__ == ("MyTwo" if subclass == "MyTwo" else "TwoTensor") and built.requires_grad
    assert (type(built.a).__name__ == "TwoTensor") == (subclass == "nested TwoTensor")
    assert f"input:{ingredient}" in program.ingredients()
    simpler = {p.inputs[0].subclass for p in program.reductions()  # the reductions of the subclass alone
               if len(p.inputs) == 1 and p.inputs[0] != a and p.inputs[0] == replace(a, subclass=p.inputs[0].subclass)}
    assert "" in simpler and (("TwoTensor" in simpler) == (subclass != "TwoTensor")), simpler


def test_a_caller_action_lands_before_or_after_its_call_and_is_reduced_alone(tmp_path: Path) -> None:
    from conformance.explore.engine import case_text
    from conformance.explore.grammar import Call, Input, Statement

    a = Input("a", (4,), True, True, "contiguous")
    program = Program((a,), (Statement("fn_apply", "a", out="v0"),), ("v0",),
                      calls=(Call("again", "zero_grad"), Call("again", "second_backward")))
    lc = Explorer(tmp_path).load(case_text(program, modes=("training",)))
    assert lc.case.classes is not None and "class Scale(torch.autograd.Function)" in lc.case.classes
    assert (lc.case.calls[0].before, lc.case.calls[0].after) == ("a.grad = None", None)
    assert lc.case.calls[1].before is None and "backward(retain_graph=True)" in (lc.case.calls[1].after or "")
    reduced = [p.calls for p in program.reductions()]
    assert (Call("again"), Call("again", "second_backward")) in reduced  # the action alone goes, the call stays
    assert {"action:zero_grad", "action:second_backward", "statement:fn_apply"} <= program.ingredients()


def test_every_grad_and_inference_context_is_drawn_as_a_block() -> None:
    from conformance.explore import coverage as cov
    from conformance.explore.grammar import CONTEXTS

    assert {"torch.no_grad()", "torch.enable_grad()", "torch.set_grad_enabled(True)", "torch.inference_mode()",
            "torch.inference_mode(False)"} <= set(CONTEXTS)
    shares = cov.coverage(300, seed_=1, run=False, registry=False)["shares"]
    assert all(shares.get(f"context:{c}", 0) > 0 for c in CONTEXTS), shares


def test_the_base_of_overlapping_views_a_later_call_passes_has_the_program_s_dtype() -> None:
    """The control found it: a later call's views of a float32 base, passed where uint8 tensors were,
    let `set_` read past a storage's end, and two eager runs differed."""
    from conformance.explore import coverage as cov

    for p in cov.draw(3000, 0, registry=True):
        base = next((i for i in p.inputs if i.name == "base" and i.hidden), None)
        if base is not None and any(c.kind == "alias_overlap" for c in p.calls):
            assert base.dtype == next(i for i in p.inputs if not i.hidden).dtype, p
