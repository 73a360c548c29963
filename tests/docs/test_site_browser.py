"""The built site in a real browser (headless Chromium from Debian, driven by selenium): the
index, a guide and the reference of `rp.Client` render with their content, the search finds
`outcome_unknown`, and no page logs a console error. A screenshot of the index is kept as
site/screenshot-index.png (CI's artifact). Skipped without chromium, except under CI=true."""

from __future__ import annotations

import functools
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from docs_site import built_site, missing

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # no request lines in the test output


@pytest.fixture(scope="module")
def site() -> Path:
    return built_site()


@pytest.fixture(scope="module")
def site_url(site: Path) -> Iterator[str]:
    """The site served on a loopback port from a thread, stopped after the module."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="docs-http", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        missing(
            "chromium and chromedriver are not installed: apt-get install chromium chromium-driver"
        )
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing("selenium is not installed: `make docs` installs the `docs` extra")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,900",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingOptions", {"browser": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver") or CHROMEDRIVER)
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()


def errors_logged(driver: Any) -> list[str]:
    """The console's SEVERE entries since the last call (reading the log empties it)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def text_of(driver: Any, css: str) -> str:
    from selenium.webdriver.common.by import By

    return str(driver.find_element(By.CSS_SELECTOR, css).text)


def test_the_index_renders(browser: Any, site_url: str, site: Path) -> None:
    browser.get(f"{site_url}/index.html")
    assert text_of(browser, "article h1") == "recurring_payments"
    article = text_of(browser, "article")
    assert "ships a strict sandbox server" in article
    assert "Quick start" in text_of(browser, "nav.md-nav--primary")
    browser.save_screenshot(str(site / "screenshot-index.png"))
    assert (site / "screenshot-index.png").stat().st_size > 10_000
    assert errors_logged(browser) == []


def test_a_guide_renders(browser: Any, site_url: str) -> None:
    browser.get(f"{site_url}/guides/errors.html")
    assert text_of(browser, "article h1") == "Errors and recovery"
    article = text_of(browser, "article")
    assert 'Never answer "please try again" to a POST whose outcome is unknown.' in article
    assert "err.outcome_unknown" in article  # the code blocks rendered, highlighted
    assert errors_logged(browser) == []


def test_the_reference_of_client_renders(browser: Any, site_url: str) -> None:
    browser.get(f"{site_url}/reference/index.html")
    heading = text_of(browser, "[id='recurring_payments.Client']")
    assert "Client" in heading
    signature = text_of(browser, "[id='recurring_payments.Client'] + div.doc-signature")
    assert signature.startswith("Client(") and "base_url" in signature
    assert "credentials" in signature and "total_timeout" in signature
    # a docstring example, rendered as code rather than as nested quotes
    assert "client.get_creditors" in text_of(browser, "article")
    assert errors_logged(browser) == []


def test_the_search_finds_outcome_unknown(browser: Any, site_url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{site_url}/index.html")
    box = WebDriverWait(browser, 10).until(
        ec.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input"))
    )
    box.click()
    box.send_keys("outcome_unknown")
    results = WebDriverWait(browser, 20).until(
        lambda driver: driver.find_elements(By.CSS_SELECTOR, "li.md-search-result__item")
    )
    found = " ".join(result.text for result in results)
    assert "outcome_unknown" in found
    assert "Errors and recovery" in text_of(browser, ".md-search-result")
    assert errors_logged(browser) == []


def test_the_configuration_table_keeps_argument_names_whole(browser: Any, site_url: str) -> None:
    browser.get(f"{site_url}/guides/configuration.html")
    # One table of every argument (a blank line inside it would end it early), each name in
    # its first column on one line.
    lines_per_name = browser.execute_script(
        "const rows = document.querySelector('article table').tBodies[0].rows;"
        "return Array.from(rows, r => [r.cells[0].innerText,"
        " r.cells[0].querySelector('code').getClientRects().length]);"
    )
    names = [name for name, _ in lines_per_name]
    assert names[0] == "base_url" and "telemetry" in names and names[-1] == "trust_env", names
    assert [name for name, lines in lines_per_name if lines != 1] == []
    assert errors_logged(browser) == []


def test_code_blocks_fit_the_window(browser: Any, site_url: str) -> None:
    # At 1280 px wide, a long line wraps rather than running under a scroll bar.
    browser.get(f"{site_url}/guides/web-frameworks.html")
    cut = browser.execute_script(
        "return Array.from(document.querySelectorAll('article pre > code'))"
        ".filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.innerText.slice(0, 60));"
    )
    assert browser.execute_script("return window.innerWidth") == 1280
    assert browser.execute_script("return document.querySelectorAll('article pre').length") >= 5
    assert cut == []
    assert errors_logged(browser) == []
