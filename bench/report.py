"""Puts one section into bench/results.md, replacing the section with the same heading (up to
the next "## " heading) or appending it at the end; bench/run rewrites the rest and keeps it.
Usage: python3 bench/report.py FILE  (FILE: the section, starting with its "## " heading)"""
import sys

section = open(sys.argv[1]).read().strip("\n") + "\n"
heading = section.split("\n", 1)[0]
key = heading.split(":")[0].split(" next to")[0]  # "## The HTTP service", "## Citus cluster"
parts = open("bench/results.md").read().rstrip("\n").split("\n## ")
kept = [p for p in parts[1:] if not ("## " + p).startswith(key)]
text = "\n## ".join([parts[0]] + kept).rstrip("\n") + "\n\n" + section
open("bench/results.md", "w").write(text)
