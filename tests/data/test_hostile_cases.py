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
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.cli import main
from conformance.core.build import build_inputs
from conformance.data.loader import discover, load_case

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
    "{tensor: {shape: [8], stride: [0]}}",
    "{tensor: {shape: [4, 4], stride: [1, 1]}}",
    "{view: 'x[(9**9**9):]'}",
    "{view: 'x[1 << 10**10:]'}",
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


# each (appended to a case) is refused at parse time, before any node is built
RECURSIVE = [
    ("extra: &r [*r]", 13, "extra[0]", "the alias *r is inside the node its anchor names (a recursive alias)"),
    ("extra: &m {a: *m}", 13, "extra.a", "the alias *m is inside the node its anchor names"),
    ("extra: &o\n  - 1\n  - [2, [3, *o]]", 15, "extra[1][1][1]", "the alias *o is inside the node its anchor"),
    # an alias chain 500 lists deep once expanded: 20,000 values, but a path 500 keys long for each
    ("extra:\n" + "\n".join(f"  - &d{i} [{f'*d{i - 1}' if i else 0}]" for i in range(500)), 52,
     "extra[38][0]", "nested more than 40 levels deep (aliases expanded)"),
    ("lol: &a [x, x, x, x, x, x, x, x, x, x]\n" + "\n".join(
        f"l{i}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]" for i in range(8)), 17,
     "l3[0]", "the document expands to more than 20000 values"),
]


# each (a line appended to a case) is an error at its own line, 13 in the case test_each_... uses
TAGS_AND_KEYS = [
    ("extra: !!python/object:os.system {}", 13, "extra", "a YAML tag (!!python/object:os.system) is not allowed"),
    ("extra: !!python/object/apply:os.system [echo hi]", 13, "extra", "(!!python/object/apply:os.system)"),
    ("extra: !!python/name:os.system ''", 13, "extra", "a YAML tag (!!python/name:os.system) is not allowed"),
    ("extra: !foo 1", 13, "extra", "a YAML tag (!foo) is not allowed"),
    ("extra: !<tag:example.com,2000:x> 1", 13, "extra", "a YAML tag (tag:example.com,2000:x) is not allowed"),
    ("extra:\n  deep: [1, 2, !!binary aGk=]", 14, "extra.deep[2]", "a YAML tag (!!binary) is not allowed"),
    ("extra: !!set {a, b}", 13, "extra", "a YAML tag (!!set) is not allowed"),
    ("extra: !!timestamp 2024-01-01", 13, "extra", "a YAML tag (!!timestamp) is not allowed"),
    ("extra: !!omap [a: 1]", 13, "extra", "a YAML tag (!!omap) is not allowed"),
    ("extra: !!str [a]", 13, "extra", "a YAML tag (!!str) is not allowed on a list"),
    ("extra: !!map [a]", 13, "extra", "a YAML tag (!!map) is not allowed"),
    ("extra: !!seq a", 13, "extra", "a YAML tag (!!seq) is not allowed on a plain value"),
    ("!foo extra: 1", 13, "extra", "a YAML tag (!foo) is not allowed"),
    ("seed: !!int abc", 13, "seed", "'abc' is not a valid !!int"),
    ("seed: !!bool maybe", 13, "seed", "'maybe' is not a valid !!bool"),
    ("seed: !!float abc", 13, "seed", "'abc' is not a valid !!float"),
    ("seed: 2024-13-45", 13, "seed", "'2024-13-45' is not a valid !!timestamp; quote it"),
    ("seed: " + "9" * 5000, 13, "seed", "an integer of 5000 characters; a case's integers fit in 64 bits"),
    ("seed: 1" + ":1" * 200_000, 13, "seed", "an integer of 400001 characters"),  # sexagesimal: quadratic to build
    ("? [a, b]\n: 1", 13, "<case>", "a mapping key must be a plain value, not a list"),
    ("? {a: 1}\n: 1", 13, "<case>", "a mapping key must be a plain value, not a mapping"),
    ("extra:\n  ? [a]\n  : 1", 14, "extra", "a mapping key must be a plain value, not a list"),
    ("extra: {[a]: 1}", 13, "extra", "a mapping key must be a plain value, not a list"),
    ("extra:\n  - &k [a]\n  - {*k : 1}", 15, "extra[1]", "not an alias (*k) of a list or mapping"),
]


def yaml_tag_or_key(text: str, data: st.DataObject) -> str:
    return text + data.draw(st.sampled_from(TAGS_AND_KEYS), label="tag")[0] + "\n"


def recursive_alias(text: str, data: st.DataObject) -> str:
    return text + data.draw(st.sampled_from(RECURSIVE), label="recursive")[0] + "\n"


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
    "yaml_tag_or_key": yaml_tag_or_key,
    "recursive_alias": recursive_alias,
}


def _validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, int]:
    """validate's exit status, output and peak memory: an input that made the loader expand or evaluate
    without bound shows in the peak (no wall-clock bound: the machine's load is not the loader's)."""
    tracemalloc.start()
    try:
        code = main(["validate", "--cases", str(path.parent), str(path)])
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    out, err = capsys.readouterr()
    return code, out, err, peak


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
    code, out, err, peak = _validate(path, capsys)
    assert code == 2, f"{name}: exit {code}\n{out}\n{err}"
    assert "Traceback" not in out + err, f"{name}:\n{out}\n{err}"
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert lines, f"{name}: no error line\n{err}"
    for line in lines:
        match = ERROR_LINE.match(line)
        assert match and match["path"] == str(path), f"{name}: not path:line: field: message: {line!r}"
        assert int(match["line"]) >= 1
    assert peak < 200 << 20, f"{name}: {peak >> 20} MiB"


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_mutation_on_its_own(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every mutation once, on one case, at its most hostile setting (so none goes untried)."""

    most = {"depth": 3000, "width": 12, "levels": 9, "bytes": 2_000_000, "values": 3000, "key": "seed",
            "value": "99999999999999999999999", "spec": TENSOR_SPECS[0], "how": "nested", "kind": ("{a: ", "}"),
            "c": "\x00", "line": 3, "col": 0, "encoding": "invalid-utf8", "more": 0,
            "tag": TAGS_AND_KEYS[0], "recursive": RECURSIVE[0]}

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
    code, out, err, peak = _validate(path, capsys)
    assert code == 2 and "Traceback" not in out + err, (out, err)
    assert all(ERROR_LINE.match(ln) for ln in out.splitlines() if ln.strip()), out
    assert peak < 200 << 20, peak


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
    code, out, _, _ = _validate(path, capsys)
    assert code == 2 and expected in out, out


def test_a_repeated_device_and_a_huge_seed_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO / "cases" / "mutation_epilogue" / "data_mutation_nonleaf.yaml").read_text()
    path = tmp_path / "case.yaml"
    path.write_text(_set_key(_set_key(text, "devices", "[cpu, cpu]"), "seed", "1.0e+23"))
    code, out, _, _ = _validate(path, capsys)
    assert code == 2
    assert "devices: Value error, each device at most once" in out or "devices: each device at most once" in out, out
    assert "seed: Input should be a valid integer" in out, out


def test_a_control_character_is_reported_at_its_own_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO / "cases" / "mutation_epilogue" / "data_mutation_nonleaf.yaml").read_text()
    lines = text.splitlines()
    lines[5] += "\x07"
    path = tmp_path / "case.yaml"
    path.write_text("\n".join(lines) + "\n")
    code, out, _, _ = _validate(path, capsys)
    assert code == 2 and out.startswith(f"{path}:6: <yaml>: invalid YAML: character #x0007 is not allowed"), out


def test_an_alias_bomb_under_config_stops_before_it_expands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO / "cases" / "mutation_epilogue" / "data_mutation_nonleaf.yaml").read_text()

    class Max:
        def draw(self, strategy: object, label: str = "") -> int:
            return {"width": 9, "levels": 9}[label]

    path = tmp_path / "case.yaml"
    path.write_text(alias_bomb(text, Max()))  # type: ignore[arg-type]  # draws like a DataObject
    assert path.stat().st_size < 2000  # 9**9 values once expanded
    code, out, _, peak = _validate(path, capsys)
    assert code == 2 and "expands to more than 20000 values (YAML anchors and aliases?)" in out, out
    assert peak < 50 << 20, peak


BASE = REPO / "cases" / "mutation_epilogue" / "data_mutation_nonleaf.yaml"  # 12 lines


def _one_error(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, int]:
    code, out, err, peak = _validate(path, capsys)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert code == 2 and "Traceback" not in out + err and len(lines) == 1, (out, err)
    return lines[0], peak


@pytest.mark.parametrize(("snippet", "line", "field", "message"), TAGS_AND_KEYS,
                         ids=[f"{i}-{t[0][:30]}" for i, t in enumerate(TAGS_AND_KEYS)])
def test_a_tag_or_a_key_that_is_not_plain_data_is_one_line_at_its_own_line(
        snippet: str, line: int, field: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "case.yaml"
    path.write_text(BASE.read_text() + snippet + "\n")
    got, _ = _one_error(path, capsys)
    assert got.startswith(f"{path}:{line}: {field}: ") and message in got, got


def test_a_tag_directive_is_resolved_before_the_tag_is_judged(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "case.yaml"
    path.write_text("%TAG !! tag:yaml.org,2002:python/\n---\n" + BASE.read_text() + "extra: !!object:os.system {}\n")
    got, _ = _one_error(path, capsys)
    assert got == f"{path}:15: extra: a YAML tag (!!python/object:os.system) is not allowed", got


@pytest.mark.parametrize(("snippet", "line", "field", "message"), RECURSIVE,
                         ids=["list", "mapping", "nested", "deep-chain", "billion-laughs"])
def test_recursive_and_exploding_aliases_are_refused_before_any_node_is_built(
        snippet: str, line: int, field: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    def compose(*args: object, **kwargs: object) -> None:
        raise AssertionError("composed a node graph: the event pass let it through")

    monkeypatch.setattr("conformance.data.loader.yaml.compose", compose)
    path = tmp_path / "case.yaml"
    path.write_text(BASE.read_text() + snippet + "\n")
    got, peak = _one_error(path, capsys)
    assert got.startswith(f"{path}:{line}: {field}: ") and message in got, got
    # 2.4 GB for `extra: &r [*r]` before; now one pass over the events
    assert peak < 20 << 20, peak


@pytest.mark.parametrize(("spec", "field", "message"), [
    ("{tensor: {shape: [8], stride: [0]}}", "stride", "stride [0] for shape [8]: dim 0 has stride 0 and size 8, so "
                                                      "elements may share memory"),
    ("{tensor: {shape: [4, 4], stride: [1, 1]}}", "stride", "dim 1 steps 1, but the smaller strides reach offset 3"),
    ("{tensor: {shape: [3, 2], stride: [2, 3]}}", "stride", "dim 1 steps 3, but the smaller strides reach offset 4"),
    ("{tensor: {values: [[1, 2], [3, 4]], stride: [1, 0]}}", "stride", "dim 1 has stride 0 and size 2"),
])
def test_a_stride_that_makes_elements_share_memory_is_refused(spec: str, field: str, message: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "case.yaml"
    path.write_text(_tensor_input(BASE.read_text(), spec.replace("}}", ", requires_grad: true}}")))
    got, _ = _one_error(path, capsys)
    assert got.startswith(f"{path}:6: inputs.x.tensor.{field}: ") and message in got, got


@pytest.mark.parametrize(("view", "message"), [
    ("base[(9**9**9):]", "9**9**9 is about 2**1162261467, beyond int64"),
    ("base[9 ** 99:]", "9 ** 99 is about 2**297, beyond int64"),
    ("base[1 << 10**10:]", "1 << 10**10 is about 2**10000000001, beyond int64"),  # 1.2 GB computed before
    ("base[:-(10**30)]", "10**30 is about 2**90, beyond int64"),
    ("base[(2**31) * (2**31) * 4:]", "(2**31) * (2**31) * 4 is beyond int64"),
    ("base[: int('9' * 99) ** 9**9]", "raises to a power or shifts by more than 64"),
    ("base[: len([0] * 10**10)]", "[0] * 10**10 repeats a sequence 10000000000 times"),
    ("base ** base", "by an amount the view does not spell out"),
    ("base[" + "1 + " * 600 + "1]", "String should have at most 1000 characters"),
])
def test_a_view_whose_arithmetic_cannot_finish_is_refused(view: str, message: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    text = BASE.read_text().replace("inputs:\n  x:\n", f"inputs:\n  base:\n    tensor: {{shape: [8]}}\n"
                                    f"    hidden: true\n  y:\n    view: \"{view}\"\n  x:\n")
    path = tmp_path / "case.yaml"
    path.write_text(text.replace("def f(x):", "def f(y, x):"))
    got, peak = _one_error(path, capsys)
    assert got.startswith(f"{path}:10: inputs.y.view: ") and message in got, got
    assert peak < 20 << 20, f"{peak >> 20} MiB: the value was computed before it was refused"


@pytest.mark.parametrize("view", ["base[2**3:]", "base[1 << 2:]", "base ** 2", "base[-1:]", "base.pow(0.5)",
                                  "base[: 2**62 - 1 + 2**62]", "base.view(-1)[:4] * 2.0 ** 70"])
def test_a_view_with_small_arithmetic_is_valid(view: str, tmp_path: Path) -> None:
    text = BASE.read_text().replace("inputs:\n  x:\n", f"inputs:\n  base:\n    tensor: {{shape: [8]}}\n"
                                    f"    hidden: true\n  y:\n    view: \"{view}\"\n  x:\n")
    path = tmp_path / "case.yaml"
    path.write_text(text.replace("def f(x):", "def f(y, x):"))
    load_case(path)


@pytest.mark.parametrize(("shape", "stride"), [([8], [1]), ([1], [0]), ([0, 4], [0, 0]), ([2, 3], [1, 2]),
                                               ([2, 5], [10, 2]), ([4, 1, 3], [3, 0, 1])])
def test_explicit_strides_that_keep_elements_apart_build(shape: list[int], stride: list[int], tmp_path: Path) -> None:
    path = tmp_path / "case.yaml"
    path.write_text(_tensor_input(BASE.read_text(), f"{{tensor: {{shape: {shape}, stride: {stride}, "
                                                    "requires_grad: true}}"))
    x = build_inputs(load_case(path).data, "cpu", "training").named["x"]
    assert x.stride() == tuple(stride) and x.requires_grad
