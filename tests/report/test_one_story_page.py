"""The page tells one story in a real headless browser (Debian's chromium driven by Playwright): the
headline agrees with "needs a person", an empty filter says so, a folded list opens on its anchor.

Skips only where chromium is absent and CI is not set, like test_html.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conformance.report import merge, model, write_report
from tests.helpers.records import full_build, record, write_results

CAUSES = 35  # more than a list shows unfolded (model.FOLD_AT), and one more: the newly failing item's
KNOWN = {"reason": "r", "link": "https://github.com/pytorch/pytorch/issues/177764", "source": "cases/x.yaml:9",
         "kind": "bug"}


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two builds, nothing untriaged and every known bug filed upstream; on 2.14.1 one item newly fails
    as a known bug, and more causes than a list shows unfolded."""
    root = tmp_path_factory.mktemp("story")
    many = [record(f"runtime_wrapper/c{i}", status="xfail", build=build, known_failure=KNOWN,
                   mismatches=({"check": "exception", "where": "call", "path": "call", "expected": "no exception",
                                "actual": f"RuntimeError: {'x' * (i + 1)}"},))
            for i in range(CAUSES - 1) for build in ("2.13.0", "2.14.1")]
    new = record("subclass_wrapper/a", status="xfail", build="2.14.1", known_failure=KNOWN,
                 mismatches=({"check": "values", "where": "out[0]", "path": "out[0]", "role": "output",
                              "subject": "out[0]", "expected": "[1.0]", "actual": "[2.0]"},))
    recs = [*full_build("2.13.0"), *[r for r in full_build("2.14.1") if r.case_id != "subclass_wrapper/a"], new,
            *many]
    report = merge([write_results(root / "r.jsonl", recs)])
    write_report(report, root / "out", publish=True)
    return (root / "out" / "index.html").as_uri()


@pytest.fixture
def page(browser: Any, page_url: str) -> Iterator[Any]:
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_url)
    yield page
    assert errors == [], "console errors (a CSP violation shows here)"
    page.close()


def test_the_headline_agrees_with_needs_a_person(page: Any) -> None:
    headline = page.locator("#summary strong").inner_text()
    attention = page.locator("#attention h2").inner_text()
    assert headline.startswith("Nothing needs a person") and attention == "Needs a person (0)", (headline, attention)
    assert "1 item(s) newly fail since the release before (1 on 2.14.1+cpu)" in headline
    assert page.locator("#newly-failing h2").inner_text() == "Newly failing since the release before (1)"
    assert "subclass_wrapper/a" in page.locator("#newly-failing").inner_text()
    # the cell that holds it says so, and looks unlike the cell of the same behaviour on the build before
    new = page.locator("#matrix td[data-behavior='subclass_wrapper'][data-build^='2.14.1']")
    old = page.locator("#matrix td[data-behavior='subclass_wrapper'][data-build^='2.13.0']")
    assert new.locator(".verdict").inner_text() == "NEWLY FAILING"
    assert old.locator(".verdict").inner_text() == "all pass"
    colour = "el => getComputedStyle(el).backgroundColor"
    assert new.evaluate(colour) != old.evaluate(colour)
    assert page.locator("#matrix-section ul.legend li").count() == len(model.SHADES)


def test_an_empty_filter_says_so(page: Any, page_url: str) -> None:
    page.goto(page_url + "#items?status=failing")
    assert page.locator("#items tbody.item:visible").count() == 0
    empty = page.locator("#items-empty")
    assert empty.is_visible()
    text = empty.inner_text()
    assert text.startswith("No item matches status failing (fail, error, xpass).") and "compat.json.gz" in text, text
    page.select_option("#f-status", "")
    assert not empty.is_visible() and page.locator("#items tbody.item:visible").count() > 0


def test_a_long_list_is_folded_with_its_count_and_opens_on_its_anchor(page: Any) -> None:
    fold = page.locator("#causes details.fold")
    assert CAUSES > model.FOLD_AT
    assert fold.locator("summary").inner_text() == f"{CAUSES} causes" and not fold.evaluate("d => d.open")
    first = fold.locator("table.causes tbody tr").first.get_attribute("id")
    page.evaluate(f"location.hash = '#{first}'")
    assert fold.evaluate("d => d.open") and page.locator(f"#{first}").is_visible()
    links = fold.locator("table.causes tbody tr").first.locator("td").last.locator("a").all_inner_texts()
    assert "#177764" in links and "upstream" not in links, links
