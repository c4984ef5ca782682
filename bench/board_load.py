#!/usr/bin/env python3
"""board_load: opens the board with 500 todos on the page in headless Chromium, BOARD_LOADS
times (20) after a first load that fetches the files (gzipped; the next loads revalidate them:
ETag, 304), and reports the median and slowest time from navigation to the first board on the
page (the page's performance mark "board:shown", set when its first render has put every todo
on the page), a render alone, and the bytes of the page's files (the first load's, as sent),
as a Markdown table.
Usage: bench/board_load.py SERVER_BINARY DBNAME TOKEN   (libpq environment of the cluster)
"""
import os
import statistics
import subprocess
import sys
import time

import psycopg
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from web import free_port, libpq_env  # noqa: E402

SERVER, DB, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]
LOADS = int(os.environ.get("BOARD_LOADS", 20))
LISTS, PER_LIST = 10, 50


def seed():
    with psycopg.connect(dbname=DB) as c:
        for n in range(LISTS):
            conv = f"list-{n:02d}"
            c.execute("SELECT todo.set_context('acme', %s, %s)", (conv, f"agent-{n}"))
            ids = [c.execute("INSERT INTO todo.todos (subject, priority, description) VALUES (%s, %s, %s) RETURNING id",
                             (f"step {i} of {conv}: do the thing that needs doing", ("high", "medium", "low", None)[i % 4],
                              "details " * 20)).fetchone()[0] for i in range(PER_LIST)]
            for i in range(0, PER_LIST, 10):
                c.execute("UPDATE todo.todos SET parent_id = %s WHERE id = %s", (ids[i], ids[i + 1]))
                c.execute("SELECT todo.block(%s, %s)", (ids[i + 3], ids[i + 2]))
                c.execute("UPDATE todo.todos SET status = 'completed' WHERE id = %s", (ids[i + 4],))
            c.execute("SELECT * FROM todo.claim(%s, 600)", (ids[5],))
            c.commit()
        count = c.execute("SELECT count(*) FROM todo.todos").fetchone()[0]
    assert count == LISTS * PER_LIST, count


def main():
    seed()
    port = free_port()
    env = dict(os.environ, **libpq_env(DB))
    log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "pg_todos-board-load.log"), "w")
    proc = subprocess.Popen([SERVER, "serve", "--listen", f"127.0.0.1:{port}"], env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        time.sleep(1)
        opts = webdriver.ChromeOptions()
        opts.binary_location = "/usr/bin/chromium"
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-background-networking", "--window-size=1400,900"):
            opts.add_argument(a)
        d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
        base = f"http://127.0.0.1:{port}"
        total, render, shown = [], [], []
        nbytes = 0
        for i in range(LOADS + 1):
            d.get("about:blank")
            d.get(f"{base}/#token={TOKEN}")
            end = time.monotonic() + 20
            m = None
            while time.monotonic() < end:
                m = d.execute_script("const s = performance.getEntriesByName('board:shown'), "
                                     "m = performance.getEntriesByName('board:render');"
                                     "return s.length && m.length ? [s[0].startTime, m[0].duration, "
                                     "document.querySelectorAll('.todo').length] : null")
                if m:
                    break
                time.sleep(0.01)
            assert m, f"the board did not render within 20 s (the service's log: {log.name})"
            if i == 0:   # the first load warms the service's pool and the browser
                nbytes = d.execute_script("return performance.getEntriesByType('resource').filter(r => "
                                          "r.name.includes('/board/')).reduce((n, r) => n + r.transferSize, 0)"
                                          " + performance.getEntriesByType('navigation')[0].transferSize")
                continue
            total.append(m[0])
            render.append(m[1])
            shown.append(m[2])
        d.quit()
    finally:
        proc.terminate()
        proc.wait(10)
    assert min(shown) == LISTS * PER_LIST, f"todos on the page: {sorted(set(shown))}"
    q = lambda xs: (statistics.median(xs), max(xs))
    print(f"| measure | median | slowest ({LOADS} loads) |")
    print("|---|---|---|")
    print("| navigation to the first board on the page, %d todos | %.0f ms | %.0f ms |" % ((LISTS * PER_LIST,) + q(total)))
    print("| a render of the %d todos alone | %.0f ms | %.0f ms |" % ((LISTS * PER_LIST,) + q(render)))
    print(f"| the page's files (HTML, CSS, modules), as sent | {nbytes:,} bytes | |")
    print()


if __name__ == "__main__":
    main()
