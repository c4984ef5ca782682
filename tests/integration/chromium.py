"""Headless Chromium for the browser tests (test_board.py, test_mcp_app.py), driven by
Selenium through Debian's chromium and chromedriver, named here so that Selenium Manager never
tries to download a browser (bin/setup installs both)."""
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

BINARY = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
COMMON = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-extensions",
          "--no-first-run", "--lang=en-US")


def chromium(*args, logs=False):
    """A driver of a fresh headless Chromium with `COMMON` and `args` (a window size, …); with
    `logs`, the browser's console and performance log kept; pages load within 30 s."""
    opts = webdriver.ChromeOptions()
    opts.binary_location = BINARY
    for a in COMMON + args:
        opts.add_argument(a)
    if logs:
        opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    d = webdriver.Chrome(service=Service(DRIVER), options=opts)
    d.set_page_load_timeout(30)
    return d
