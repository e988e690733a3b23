"""Broken and hostile case files: every one is `path:line: field: message` (exit 2), never a
traceback, in bounded time and memory (Note [Hostile case files]).

The fuzz test takes the committed corpus's real case files and breaks them the ways people and
attackers do: wrong types and values that cannot run, unknown and duplicate keys, deep nesting,
alias bombs, control characters, other encodings, truncation, sheer size. Hypothesis draws
which file, where, and how much (a few dozen variants in CI's profile, hundreds with
`--hypothesis-profile thorough`).
"""

from __future__ import annotations

import re
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.cli import main
from conformance.loader import discover

REPO = Path(__file__).parents[2]
CORPUS = discover([REPO / "cases"])
ERROR_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<field>[^:\n]+): (?P<message>.+)$")

Mutation = Callable[[str, st.DataObject], str | bytes]


def _set_key(text: str, key: str, value: str) -> str:
    """`text` with the top-level `key` (added if absent) set to the YAML flow `value`."""
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"{key}:")]
    return "\n".join([*lines, f"{key}: {value}"]) + "\n"


def _tensor_input(text: str, spec: str) -> str:
    """Replace the case's inputs with one tensor input of the given flow-mapping spec."""
    data = yaml.safe_load(text)
    first = next(iter(data["inputs"]))
    data["inputs"] = {first: "__SPEC__"}
    data.pop("calls", None)
    dumped = yaml.safe_dump(data, sort_keys=False, width=1000)
    assert " __SPEC__\n" in dumped, dumped
    return dumped.replace(" __SPEC__\n", f" {spec}\n")


BAD_VALUES = {
    # key: values that must be refused where they stand
    "seed": ["-1", "1.0e+23", "'seven'", "[1]", "99999999999999999999999"],
    "behavior": ["nope", "42", "[mutation_epilogue]", "null"],
    "modes": ["[train]", "[inference, inference]", "inference", "[]"],
    "backends": ["[]", "[aot_eager, aot_eager]", "{a: 1}"],
    "devices": ["[cpu, cpu]", "['not a device']", "[]"],
    "upstream": ["[]", "[http://example.invalid]", "['javascript:alert(1)']"],
    "program": ["'def f(:'", "'x = 1'", "'def f(x):\\n    return x\\ndef g(x):\\n    return x'"],
    "expect": ["{rtol: -1.0}", "{compiles: 1.5}", "{version: often}", "{raises: {type: 'not a name'}}",
               "{atol: .nan}", "{compiles: 99999999}"],
    "summary": ["''", "[a, b]"],
    "config": ["{'not.a.config': 1}", "{torch._dynamo.specialize_float: false}"],
}
TENSOR_SPECS = [
    "{tensor: {shape: [1.0e+20]}}",
    "{tensor: {shape: [4], stride: [-1]}}",
    "{tensor: {shape: [4], storage_offset: 1.0e+20}}",
    "{tensor: {shape: [100000, 100000]}}",
    "{tensor: {shape: [16, 16], stride: [1048576, 1048576]}}",  # spans 31,457,281 elements
    "{tensor: {shape: [4], dtype: float33}}",
    "{tensor: {shape: [1, 1, 1, 1, 1, 1, 1, 1, 1]}}",
    "{tensor: {shape: [4], dynamic_dims: [0, 0]}}",
    "{tensor: {shape: [4], requires_grad: true, dtype: int64}}",
    "{tensor: {shape: '4'}}",
    "{tensor: {shape: [true]}}",
    "{view: 'x[:'}",
]


def wrong_value(text: str, data: st.DataObject) -> str:
    key = data.draw(st.sampled_from(sorted(BAD_VALUES)), label="key")
    return _set_key(text, key, data.draw(st.sampled_from(BAD_VALUES[key]), label="value"))


def bad_tensor(text: str, data: st.DataObject) -> str:
    return _tensor_input(text, data.draw(st.sampled_from(TENSOR_SPECS), label="spec"))


def unknown_key(text: str, data: st.DataObject) -> str:
    name = data.draw(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), label="key")
    how = data.draw(st.sampled_from(["top", "duplicate", "nested"]), label="how")
    if how == "top":
        return _set_key(text, f"zz_{name}", "1")
    if how == "duplicate":
        return text.rstrip("\n") + "\nsummary: said twice\n"
    return _set_key(text, "expect", f"{{zz_{name}: 1}}")


def deep_nesting(text: str, data: st.DataObject) -> str:
    depth = data.draw(st.integers(41, 3000), label="depth")
    opener, closer = data.draw(st.sampled_from([("[", "]"), ("{a: ", "}")]), label="kind")
    return _set_key(text, "config", "{torch._dynamo.config.x: " + opener * depth + "1" + closer * depth + "}")


def alias_bomb(text: str, data: st.DataObject) -> str:
    width = data.draw(st.integers(6, 12), label="width")
    levels = data.draw(st.integers(7, 9), label="levels")
    anchors = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels):
        anchors.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    body = "\n".join("  " + a for a in anchors)
    return text + f"config:\n  torch._dynamo.config.bomb:\n{body}\n".replace("  a", "    a")


def control_character(text: str, data: st.DataObject) -> str:
    char = data.draw(st.sampled_from(["\x00", "\x01", "\x07", "\x08", "\x0b", "\x1b", "\x7f", "\ufffe"]), label="c")
    lines = text.splitlines()
    at = data.draw(st.integers(0, len(lines) - 1), label="line")
    col = data.draw(st.integers(0, len(lines[at])), label="col")
    lines[at] = lines[at][:col] + char + lines[at][col:]
    return "\n".join(lines) + "\n"


def other_encoding(text: str, data: st.DataObject) -> bytes:
    how = data.draw(st.sampled_from(["utf-16", "latin-1-bytes", "invalid-utf8", "nul-bytes"]), label="encoding")
    if how == "utf-16":
        return text.encode("utf-16")
    if how == "latin-1-bytes":
        return _set_key(text, "summary", "caf\xe9").encode("latin-1")
    if how == "invalid-utf8":
        return text.encode() + b"\xff\xfe\xfa"
    return text.encode().replace(b"\n", b"\n\x00", 1)


def truncated(text: str, data: st.DataObject) -> str:
    # cut inside the program's first line: a mapping stays, the program's function does not
    cut = text.index("program:") + len("program:")
    return text[: cut + data.draw(st.integers(0, 3), label="more")] + "\n"


def sheer_size(text: str, data: st.DataObject) -> str:
    n = data.draw(st.integers(1_100_000, 2_000_000), label="bytes")
    return text + "# " + "x" * n + "\n"


def long_sweep(text: str, data: st.DataObject) -> str:
    n = data.draw(st.integers(1001, 3000), label="values")
    data_ = yaml.safe_load(text)
    data_["inputs"]["lr"] = {"scalar": {"values": [0.5] * n}}
    return yaml.safe_dump(data_, sort_keys=False)


MUTATIONS: dict[str, Mutation] = {
    "wrong_value": wrong_value,
    "bad_tensor": bad_tensor,
    "unknown_key": unknown_key,
    "deep_nesting": deep_nesting,
    "alias_bomb": alias_bomb,
    "control_character": control_character,
    "other_encoding": other_encoding,
    "truncated": truncated,
    "sheer_size": sheer_size,
    "long_sweep": long_sweep,
}


def _validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, float, int]:
    tracemalloc.start()
    start = time.perf_counter()
    try:
        code = main(["validate", "--cases", str(path.parent), str(path)])
    finally:
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    out, err = capsys.readouterr()
    return code, out, err, elapsed, peak


# capsys is read (and so emptied) once per example; twelve times the profile's examples: 300 in CI
@settings(max_examples=12 * settings.default.max_examples, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_broken_case_file_is_an_error_at_a_line(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    source = data.draw(st.sampled_from(CORPUS), label="file")
    name = data.draw(st.sampled_from(sorted(MUTATIONS)), label="mutation")
    broken = MUTATIONS[name](source.read_text(encoding="utf-8"), data)
    path = tmp_path_factory.mktemp("hostile") / "case.yaml"
    if isinstance(broken, bytes):
        path.write_bytes(broken)
    else:
        path.write_text(broken, encoding="utf-8")
    code, out, err, elapsed, peak = _validate(path, capsys)
    assert code == 2, f"{name}: exit {code}\n{out}\n{err}"
    assert "Traceback" not in out + err, f"{name}:\n{out}\n{err}"
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert lines, f"{name}: no error line\n{err}"
    for line in lines:
        match = ERROR_LINE.match(line)
        assert match and match["path"] == str(path), f"{name}: not path:line: field: message: {line!r}"
        assert int(match["line"]) >= 1
    assert elapsed < 10, f"{name}: {elapsed:.1f} s"
    assert peak < 200 << 20, f"{name}: {peak >> 20} MiB"


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_mutation_on_its_own(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every mutation once, on one case, at its most hostile setting (so none goes untried)."""

    most = {"depth": 3000, "width": 12, "levels": 9, "bytes": 2_000_000, "values": 3000, "key": "seed",
            "value": "99999999999999999999999", "spec": TENSOR_SPECS[0], "how": "nested", "kind": ("{a: ", "}"),
            "c": "\x00", "line": 3, "col": 0, "encoding": "invalid-utf8", "more": 0}

    class Fixed:
        def draw(self, strategy: object, label: str = "") -> object:
            return most[label]

    source = REPO / "cases" / "mutation_epilogue" / "data_mutation_nonleaf.yaml"
    broken = MUTATIONS[name](source.read_text(), Fixed())  # type: ignore[arg-type]  # draws like a DataObject
    path = tmp_path / "case.yaml"
    if isinstance(broken, bytes):
        path.write_bytes(broken)
    else:
        path.write_text(broken)
    code, out, err, elapsed, peak = _validate(path, capsys)
    assert code == 2 and "Traceback" not in out + err, (out, err)
    assert all(ERROR_LINE.match(ln) for ln in out.splitlines() if ln.strip()), out
    assert elapsed < 10 and peak < 200 << 20, (elapsed, peak)


@pytest.mark.parametrize(("spec", "expected"), [
    ("{tensor: {shape: [1.0e+20]}}", "inputs.x.tensor.shape[0]: Input should be a valid integer"),
    ("{tensor: {shape: [4], stride: [-1]}}", "inputs.x.tensor.stride[0]: Input should be greater than or equal to 0"),
    ("{tensor: {shape: [4], storage_offset: 1.0e+20}}", "inputs.x.tensor.storage_offset: Input should be a valid "
                                                        "integer"),
    ("{tensor: {shape: [100000, 100000]}}", "shape [100000, 100000] has 10000000000 elements; at most 16777216"),
])
def test_values_that_cannot_run_are_refused_where_they_stand(spec: str, expected: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO / "cases" / "mutation_epilogue" / "data_mutation_nonleaf.yaml").read_text()
    path = tmp_path / "case.yaml"
    path.write_text(_tensor_input(text, spec))
    code, out, _, _, _ = _validate(path, capsys)
    assert code == 2 and expected in out, out


def test_a_repeated_device_and_a_huge_seed_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO / "cases" / "mutation_epilogue" / "data_mutation_nonleaf.yaml").read_text()
    path = tmp_path / "case.yaml"
    path.write_text(_set_key(_set_key(text, "devices", "[cpu, cpu]"), "seed", "1.0e+23"))
    code, out, _, _, _ = _validate(path, capsys)
    assert code == 2
    assert "devices: Value error, each device at most once" in out or "devices: each device at most once" in out, out
    assert "seed: Input should be a valid integer" in out, out


def test_a_control_character_is_reported_at_its_own_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO / "cases" / "mutation_epilogue" / "data_mutation_nonleaf.yaml").read_text()
    lines = text.splitlines()
    lines[5] += "\x07"
    path = tmp_path / "case.yaml"
    path.write_text("\n".join(lines) + "\n")
    code, out, _, _, _ = _validate(path, capsys)
    assert code == 2 and out.startswith(f"{path}:6: <yaml>: invalid YAML: character #x0007 is not allowed"), out


def test_an_alias_bomb_under_config_stops_before_it_expands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO / "cases" / "mutation_epilogue" / "data_mutation_nonleaf.yaml").read_text()

    class Max:
        def draw(self, strategy: object, label: str = "") -> int:
            return {"width": 9, "levels": 9}[label]

    path = tmp_path / "case.yaml"
    path.write_text(alias_bomb(text, Max()))  # type: ignore[arg-type]  # draws like a DataObject
    assert path.stat().st_size < 2000  # 9**9 values once expanded
    code, out, _, elapsed, peak = _validate(path, capsys)
    assert code == 2 and "expands to more than 20000 values (YAML anchors and aliases?)" in out, out
    assert elapsed < 5 and peak < 50 << 20, (elapsed, peak)
