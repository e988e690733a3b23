"""A case id names files (the reproducer, a junit classname): one that no file system or XML
parser can hold is a validation error at its line, not a traceback when the run writes its files."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.data.loader import CaseLoadError, load_case
from conformance.schema.common import CASE_ID_MAX
from tests.data.test_loader import MINIMAL, errors_of, write


@pytest.mark.parametrize("bad", ["a" * (CASE_ID_MAX + 1), "x\x00y", "esc\x1b[31m", "../up", "/abs", "Upper",
                                 "two//slashes", "sp ace", "x/", "trailing\n"])
def test_an_id_that_cannot_name_a_file_is_an_error_at_its_line(tmp_path: Path, bad: str) -> None:
    text = MINIMAL.replace("behavior:", f'id: "{bad.encode("unicode_escape").decode()}"\nbehavior:')
    (err,) = errors_of(write(tmp_path, text))
    assert err.startswith("case.yaml:1: id: ") and ("is not a case id" in err or f"at most {CASE_ID_MAX}" in err)


def test_a_path_derived_id_is_checked_too_and_says_where_it_came_from(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL, "mutation_epilogue/" + "b" * 200 + ".yaml")
    with pytest.raises(CaseLoadError) as info:
        load_case(path, tmp_path, display="long.yaml")
    (err,) = (str(e) for e in info.value.errors)
    assert err.startswith("long.yaml:1: id: ") and "218 characters" in err and "from the file's path" in err


@pytest.mark.parametrize("good", ["a", "mutation_epilogue/x_1.v2-b", "a" * CASE_ID_MAX])
def test_ids_the_corpus_uses_still_load(tmp_path: Path, good: str) -> None:
    assert load_case(write(tmp_path, MINIMAL.replace("behavior:", f"id: {good}\nbehavior:")), tmp_path).id == good
