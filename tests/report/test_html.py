"""index.html in a real headless browser (Debian's chromium driven by Playwright).

Skips only where chromium is absent and CI is not set; under CI=true a missing browser fails
(.ci/run installs it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.bench.document import BenchDocument
from conformance.report import merge, write_report
from tests.helpers.records import bench_doc, changed, full_build, record, write_results

SCRIPT_SUMMARY = "<script>window.__pwned = 1</script> & <b>bold</b>"
KNOWN_REASON = "the wrapper drops the inner tensor's strides"
LONG = "x" * 6000  # one unbreakable line: a long diff, source or value must scroll in its own box


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("html")
    a = full_build("2.13.0", status={"runtime_wrapper/a": "fail"})
    a[0] = a[0].model_copy(update={"summary": SCRIPT_SUMMARY})
    b = [*full_build("2.14.1", status={"subclass_wrapper/b": "xfail"}),
         record("scalar_recompile/c", "cuda-aot_eager-inference", "skip", "2.14.1", reason="device cuda: absent")]
    known = next(i for i, r in enumerate(b) if r.case_id == "subclass_wrapper/b")
    b[known] = changed(b[known], reason=f"known failure: {KNOWN_REASON} (#1)", known_failure={
        "source": "cases/subclass_wrapper/b.yaml", "reason": KNOWN_REASON, "link": "https://example.invalid/1"},
        mismatches=[{
        "check": "values", "where": "out[0]", "expected": "[" + "1.0," * 400 + "]", "actual": LONG,
        "detail": LONG, "source": "eager"}], probes={"results": [{
            "behavior": "runtime_wrapper", "status": "diverges", "diff": "- " + LONG + "\n+ " + LONG,
            "build_source": "def f():\n    return " + LONG, "reference_source": "def g(): pass"}]})
    report = merge([write_results(root / "a.jsonl", a), write_results(root / "b.jsonl", b)])
    report.bench = [BenchDocument.model_validate(bench_doc("2.13.0", e2e=60.0, yard=10.0, step=None)),
                    BenchDocument.model_validate(bench_doc("2.14.1", e2e=50.0, yard=10.0, step=5.0))]
    write_report(report, root / "out")
    return (root / "out" / "index.html").as_uri()


@pytest.fixture
def page(browser: Any, page_url: str) -> Iterator[Any]:
    page = browser.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_url)
    yield page
    assert {r.split("#")[0] for r in requests} == {page_url}, "the page loaded something besides itself"
    assert errors == [], "console errors (a CSP violation shows here)"
    page.close()


def _visible_items(page: Any) -> int:
    return int(page.locator("#items tbody.item:visible").count())


def test_the_matrix_renders_as_a_heat_map(page: Any) -> None:
    cells = page.locator("#matrix td.cell")
    # 5 behaviours x (2.13.0 cpu, 2.14.1 cpu, 2.14.1 cuda)
    assert cells.count() == 15
    headers = page.locator("#matrix thead tr").nth(1).locator("th").all_inner_texts()
    assert headers == ["cpu", "cpu", "cuda"]
    failing = page.locator("#matrix td[data-behavior='runtime_wrapper'][data-build^='2.13.0']")
    assert "FAIL" in failing.inner_text() and "1 fail" in failing.inner_text()
    ok = page.locator("#matrix td[data-behavior='mutation_epilogue'][data-build^='2.13.0']")
    empty = page.locator("#matrix td[data-behavior='scalar_recompile'][data-device='cuda']")
    assert "NO CASE RAN" in empty.inner_text()
    colour = "el => getComputedStyle(el).backgroundColor"
    green, red = ok.evaluate(colour), failing.evaluate(colour)
    r, g, _b = (int(x) for x in green[green.index("(") + 1 : -1].split(",")[:3])
    assert g > r, green  # all passed: green
    r2, g2, _b2 = (int(x) for x in red[red.index("(") + 1 : -1].split(",")[:3])
    assert r2 > g2 or r2 >= r, red  # one in two failed: toward red
    assert page.locator("#matrix td.empty").count() == 5  # cuda ran no case of any behaviour on 2.14.1


def test_filters_and_sorting_work(page: Any) -> None:
    assert _visible_items(page) == 21
    assert page.locator("#count").inner_text() == "21 of 21 items"
    page.select_option("#f-status", "fail")
    assert _visible_items(page) == 1
    assert page.locator("#items tbody.item:visible").get_attribute("data-case") == "runtime_wrapper/a"
    page.select_option("#f-status", "failing")
    assert _visible_items(page) == 1
    page.select_option("#f-status", "")
    page.select_option("#f-build", "2.14.1+cpu@5c4886908584")
    assert _visible_items(page) == 11
    page.select_option("#f-device", "cuda")
    assert page.locator("#count").inner_text() == "1 of 21 items"
    page.click("#f-reset")
    page.fill("#f-q", "subclass_wrapper/")
    assert _visible_items(page) == 4
    page.fill("#f-q", "")
    # a matrix cell narrows the list to its items
    page.click("#matrix td[data-behavior='subclass_wrapper'][data-build^='2.14.1'][data-device='cpu']")
    assert _visible_items(page) == 2
    assert page.input_value("#f-behavior") == "subclass_wrapper"
    statuses = page.locator("#items tbody.item:visible").evaluate_all("els => els.map(e => e.dataset.status)")
    assert sorted(statuses) == ["pass", "xfail"]
    page.click("#items button.sort[data-key='status']")
    asc = page.locator("#items tbody.item:visible").evaluate_all("els => els.map(e => e.dataset.status)")
    page.click("#items button.sort[data-key='status']")
    desc = page.locator("#items tbody.item:visible").evaluate_all("els => els.map(e => e.dataset.status)")
    assert asc == ["pass", "xfail"] and desc == ["xfail", "pass"]


def test_a_summary_with_script_is_shown_as_text(page: Any) -> None:
    assert page.evaluate("window.__pwned") is None
    row = page.locator("#items tbody.item[data-case='mutation_epilogue/a'][data-build^='2.13.0']")
    assert row.locator(".summary").inner_text() == SCRIPT_SUMMARY
    assert page.locator("#items .summary b").count() == 0
    # details open on demand and show the mismatch of a failing item
    failing = page.locator("#items tbody.item[data-case='runtime_wrapper/a'][data-build^='2.13.0']")
    assert not failing.locator("tr.detail").is_visible()
    failing.locator("button.toggle").click()
    assert "values" in failing.locator("table.mismatches").inner_text()
    assert failing.locator("table.mismatches").inner_text().count("[2.0]") == 1


def _top(page: Any, selector: str) -> float:
    return float(page.locator(selector).first.evaluate("el => el.getBoundingClientRect().top + window.scrollY"))


def test_failures_come_first_then_the_matrix(page: Any) -> None:
    attention = page.locator("#attention")
    assert "runtime_wrapper/a" in attention.inner_text()
    assert _top(page, "#attention") < _top(page, "#matrix-section") < _top(page, "#items-section")
    # nothing but the page's title stands above the failures
    assert _top(page, "#attention") < page.evaluate("window.innerHeight")


def test_the_timeline_has_a_row_per_item_that_changes_with_its_first_failing_and_fixed_release(page: Any) -> None:
    row = page.locator("#history table.timeline tbody tr", has_text="runtime_wrapper/a")
    assert row.count() == 1
    cells = row.locator("td").all_inner_texts()
    assert cells[1:3] == ["fail", "pass"] and cells[3:5] == ["2.13.0+cpu", "2.14.1+cpu"]


def test_the_bench_plot_is_drawn_in_the_speed_section(page: Any) -> None:
    plot = page.locator("#speed #bench-plot svg")
    assert plot.count() == 1 and plot.is_visible()
    box = plot.bounding_box()
    assert box["width"] > 300 and box["height"] > 100
    assert plot.locator("rect").count() > 3  # bars, not an empty frame
    assert "2.13.0 → 2.14.1" in page.locator("#speed table.speed").first.inner_text()


def test_a_long_diff_open_does_not_push_the_page_sideways(page: Any) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    item = page.locator("#items tbody.item[data-case='subclass_wrapper/b'][data-build^='2.14.1']")
    item.locator("button.toggle").click()
    assert item.locator("pre.diff").is_visible()
    assert item.locator(".sources pre").first.is_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than the window with the diff open"
    diff = item.locator("pre.diff")
    assert diff.evaluate("el => el.scrollWidth > el.clientWidth")  # the long line scrolls inside its box
    # tracebacks, diffs and sources are monospace
    assert "mono" in diff.evaluate("el => getComputedStyle(el).fontFamily")


def test_a_known_failure_gives_its_reason_once(page: Any) -> None:
    item = page.locator("#items tbody.item[data-case='subclass_wrapper/b'][data-build^='2.14.1']")
    item.locator("button.toggle").click()
    assert item.locator("tr.detail").inner_text().count(KNOWN_REASON) == 1


@pytest.mark.parametrize("width", [1400, 390])
def test_the_page_fits_the_window_and_the_timeline_columns_line_up(page: Any, width: int, tmp_path: Path) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"at {width}px the page scrolls {overflow}px sideways"
    lefts = page.evaluate("""() => { const t = document.querySelector('table.timeline');
        const cells = row => [...row.cells].map(c => Math.round(c.getBoundingClientRect().left));
        return [cells(t.tHead.rows[0]), cells(t.querySelector('#timeline-rows tr'))]; }""")
    assert lefts[0] == lefts[1], lefts  # every status under its release, none piled into one column
    assert page.locator("#history").is_visible()
    shot = tmp_path / f"report-{width}.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000  # a page was drawn, not a blank


def test_filters_live_in_the_url_and_a_link_opens_an_item_or_a_cause(page: Any, page_url: str) -> None:
    page.select_option("#f-status", "xfail")
    assert page.evaluate("location.hash") == "#items?status=xfail"
    page.goto(page_url + "#items?status=fail")
    assert _visible_items(page) == 1 and page.input_value("#f-status") == "fail"
    # a failure in "needs a person" links to its item, opened
    page.goto(page_url)
    page.locator("#attention ul.failures a").first.click()
    item = page.locator("#items tbody.item:visible")
    # the page answers the hash change asynchronously: wait for it, as a reader would
    pytest.importorskip("playwright.sync_api").expect(item).to_have_count(1)
    assert item.get_attribute("data-case") == "runtime_wrapper/a"
    assert item.locator("tr.detail").is_visible()
    # a cause lists its items
    page.goto(page_url)
    page.locator("#causes table.causes tbody tr a[href^='#items?cause=']").first.click()
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(page.locator("#cause-filter")).to_be_visible()
    assert _visible_items(page) >= 1


def test_the_long_lists_are_data_until_asked_for(page: Any) -> None:
    nodes = page.evaluate("document.getElementsByTagName('*').length")
    rows = page.evaluate("JSON.parse(document.getElementById('data').textContent).items.length")
    assert rows == 21 and nodes < 2_000, nodes


def test_the_score_of_each_behaviour_is_drawn_across_releases(page: Any) -> None:
    plot = page.locator("#trend svg")
    assert plot.is_visible() and plot.locator("polyline").count() == 5  # one line per behaviour, two builds
    labels = plot.locator("text").evaluate_all("els => els.map(e => e.textContent)")
    assert "2.13.0" in labels and "2.14.1" in labels
    assert any(label.startswith("mutation_epilogue ") and label.endswith("%") for label in labels)
