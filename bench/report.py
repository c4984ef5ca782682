"""bench/results.md, section by section. bench/run writes the whole report but keeps the
sections other commands write (EXTERNAL); bench/cluster, bench/sse_load.sh, bench/board_load.sh,
bench/cycle.sh, bench/instructions, bench/end_to_end.sh, bench/queue, bench/tracker_read.sh and
bench/feed_follow.sh each replace their own; bin/evidence reads them. A section runs from its "## " heading to the next one.

  python3 bench/report.py put FILE    FILE (a section, starting with its heading) replaces the
                                      section of the same kind, or is appended
  python3 bench/report.py keep FILE   FILE (bench/run's new report) gets the EXTERNAL sections
                                      of bench/results.md appended, then replaces it"""
import sys

PATH = "bench/results.md"
# heading prefixes of the sections written by other commands than bench/run
EXTERNAL = ("## The HTTP service", "## Citus cluster", "## Cycle check", "## Instructions per operation", "## End to end",
            "## Queue", "## The board", "## A tracker's whole-list read", "## Following the feed")


def split(text):
    """The text before the first section, and each section with its heading."""
    head, *rest = text.rstrip("\n").split("\n## ")
    return head, ["## " + part for part in rest]


def find(text, prefix):
    """The section whose heading starts with prefix, or None."""
    return next((s for s in split(text)[1] if s.startswith(prefix)), None)


def kind(heading):
    """The prefix that names a section's kind: an EXTERNAL one, else the heading up to a ':'."""
    return next((p for p in EXTERNAL if heading.startswith(p)), heading.split(":")[0])


def put(section):
    section = section.strip("\n") + "\n"
    key = kind(section.split("\n", 1)[0])
    head, sections = split(open(PATH).read())
    kept = [s.rstrip("\n") for s in sections if not s.startswith(key)]
    open(PATH, "w").write("\n\n".join([head.rstrip("\n")] + kept + [section.rstrip("\n")]) + "\n")


def keep(report):
    external = [s for s in split(open(PATH).read())[1] if s.startswith(EXTERNAL)]
    text = open(report).read().rstrip("\n") + "\n" + "".join("\n" + s.rstrip("\n") + "\n" for s in external)
    open(PATH, "w").write(text)


if __name__ == "__main__":
    {"put": lambda f: put(open(f).read()), "keep": keep}[sys.argv[1]](sys.argv[2])
