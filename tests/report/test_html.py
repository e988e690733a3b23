"""index.html in a real headless browser (Debian's chromium driven by Playwright).

Skips only where chromium is absent and CI is not set; under CI=true a missing browser fails
(.ci/run installs it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.report import merge, write_report
from tests.report.conftest import full_build, record, write_results

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
SCRIPT_SUMMARY = "<script>window.__pwned = 1</script> & <b>bold</b>"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI is set but {CHROMIUM} is missing: .ci/run installs it (apt-get install -y chromium)")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium chromium-driver); under CI=true "
                    "this is a failure")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("html")
    a = full_build("2.13.0", status={"runtime_wrapper/a": "fail"})
    a[0] = a[0].model_copy(update={"summary": SCRIPT_SUMMARY})
    b = [*full_build("2.14.1", status={"subclass_wrapper/b": "xfail"}),
         record("scalar_recompile/c", "cuda-aot_eager-inference", "skip", "2.14.1", reason="device cuda: absent")]
    report = merge([write_results(root / "a.jsonl", a), write_results(root / "b.jsonl", b)])
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
    assert requests == [page_url], "the page loaded something besides itself"
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
