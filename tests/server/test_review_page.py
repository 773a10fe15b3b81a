"""The review page end to end in headless Chromium: search, open a cluster, open a pair, see
the picture. The app runs under uvicorn on a free loopback port, over a real node.

The browser is Debian's ``chromium`` driven through its ``chromium-driver`` (Selenium; nothing
is downloaded). ``scripts/install_chromium.sh`` installs both (``.ci/run`` calls it); without
them the test fails and says how to install them. The screenshot of the explain view is saved
to ``artifacts/review_page.png`` (git-ignored) for a person to look at.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.app import create_app
from tests.server.conftest import TOM, TOM_PART1, serving

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1600",
)


@pytest.fixture(scope="module")
def server_url(served) -> Iterator[str]:
    import uvicorn

    config = uvicorn.Config(create_app(served[1]), host="127.0.0.1", port=0, log_level="error")
    with serving(config) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.fail(
            "Chromium is missing: run `bash scripts/install_chromium.sh` "
            "(Debian packages chromium and chromium-driver)",
            pytrace=False,
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in CHROMIUM_ARGS:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def wait_for(driver, condition, timeout: float = 60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def test_search_open_a_cluster_open_a_pair_see_the_picture(browser, server_url) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    d = browser
    d.get(server_url + "/")
    box = wait_for(d, ec.presence_of_element_located((By.ID, "q")))
    box.send_keys("Tom Sawyer")
    d.find_element(By.CSS_SELECTOR, "#search-form button").click()

    # one hit for the Tom Sawyer edition cluster, which holds both books
    hits = wait_for(d, lambda drv: drv.find_elements(By.CSS_SELECTOR, "li.hit"))
    tom = [h for h in hits if "Tom Sawyer" in h.text]
    assert len(tom) == 1, [h.text for h in hits]
    assert "2 editions" in tom[0].text
    assert "edition clusters" in d.find_element(By.ID, "results-title").text

    # open the cluster: the book's related list, grouped by class
    tom[0].find_element(By.CSS_SELECTOR, "button.hit-title").click()
    group = wait_for(d, ec.visibility_of_element_located((By.CSS_SELECTOR, ".group")))
    assert group.get_attribute("data-relation") == "CONTIGUOUS_SUBSET"
    row = group.find_element(By.CSS_SELECTOR, "tr.relation")
    other = row.get_attribute("data-book")
    assert other in (TOM, TOM_PART1)
    # the direction in the server's words (bookdup.vocabulary), the same as the CLI's
    seen_from_whole = other == TOM_PART1
    assert (
        "the other book is contained in this one"
        if seen_from_whole
        else "this book is contained in the other"
    ) in row.text

    # open the pair: verdict, decision, confidences and the picture
    row.find_element(By.CSS_SELECTOR, "button.explain").click()
    verdict = wait_for(d, ec.visibility_of_element_located((By.ID, "verdict")))
    wait_for(d, lambda drv: "CONTIGUOUS_SUBSET" in drv.find_element(By.ID, "verdict").text)
    part = "B is contained in A" if seen_from_whole else "A is contained in B"
    assert f"{part}: it is pages " in verdict.text
    loaded = "const i = document.getElementById('plot'); return i.complete && i.naturalWidth;"
    width = wait_for(d, lambda drv: drv.execute_script(loaded))
    assert width >= 800  # the PNG decoded in the browser
    assert len(d.find_elements(By.CSS_SELECTOR, "#decision li")) >= 3
    assert "CONTIGUOUS_SUBSET" in d.find_element(By.ID, "confidences").text
    # the signals in plain words, the same as `bookdup compare` prints (bookdup.vocabulary)
    signals = d.find_element(By.ID, "signals").text
    assert "share of A covered by shared text" in signals
    assert "book similarity (min-hash Jaccard)" in signals
    for raw in ("coverage_x", "book_similarity", "page_match_fraction", "None"):
        assert raw not in signals, raw
    assert d.find_element(By.ID, "status").text == ""  # no error shown

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "review_page.png"
    d.save_screenshot(str(shot))
    assert shot.read_bytes().startswith(b"\x89PNG")

    # an unknown book shows the API's message, not a blank page
    d.get(server_url + "/#book/no-such-book")
    status = wait_for(d, ec.visibility_of_element_located((By.ID, "status")))
    wait_for(d, lambda drv: "no book with id" in drv.find_element(By.ID, "status").text)
    assert "error" in status.get_attribute("class")


def test_chromium_is_debians_not_a_download() -> None:
    """The browser is the distribution's: no cache of downloaded browsers is used."""
    assert shutil.which("chromium") == CHROMIUM or Path(CHROMIUM).exists()
