"""The documentation's benchmark tables: where each came from, and a rerun of its command.

Every benchmark table in ``docs/`` sits under one line that names it::

    > Benchmark: `python -m hsc bench ...` · recorded 2026-12-04 · 2-core x86-64, 24 GiB, ...

(the command, the date the figures were recorded, the machine). ``tests/test_docs_figures.py``
checks that every table has one and that each table's rows are still the rows its benchmark reports.

    python tests/doc_figures.py            # list every table: page, line, command
    python tests/doc_figures.py --run      # rerun each command that runs as written (``make figures``)
    python tests/doc_figures.py --run quality.md   # only that page's
    python tests/doc_figures.py --run performance.md:63   # only the table whose header is on that line

A rerun writes each command's output to ``.hsc/figures/<page>-<line>.txt``; ``DIR`` and ``OUT`` in a
command become a folder there. Commands that name something only their author had (``BEFORE``, an
encoder folder, a corpus) are listed with what they need, not run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SOURCE = re.compile(
    r"^> Benchmark: `(?P<command>[^`]+)` · recorded (?P<date>\d{4}-\d\d-\d\d) · (?P<machine>.+)$"
)
# Tables that hold no measurement: what a page shows, what a command does, and the like (by header).
NOT_BENCHMARKS = (
    "| page | what it shows |",
    "| command | what it does |",
    "| backend | what runs |",
    "| you want to | read |",
    "| part | what is used |",
    "| tool | what it does |",
    "| languages | leaves |",
    "| parameters | measured on |",
    "| role | paths",
    "| Query parameter | Meaning |",
)
# Words in a command that only the person who ran it could fill in.
PLACEHOLDERS = ("BEFORE", "ROW=", "CORPUS", "KIND", "BC@", "W@", "S@", "DIR@", "=N ", "=W")


@dataclass
class Table:
    page: str
    line: int  # 1-based line of the header
    header: str
    rows: list[list[str]]  # the body's cells, stripped
    source: re.Match[str] | None  # the line above it, when it is a source line

    @property
    def benchmark(self) -> bool:
        return not self.header.startswith(NOT_BENCHMARKS)

    def column(self, index: int) -> list[str]:
        return [row[index] for row in self.rows]


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def tables(page: Path) -> list[Table]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found, number, fence = [], 0, False
    while number < len(lines):
        line = lines[number]
        fence ^= line.startswith("```")
        if not fence and line.startswith("| ") and (number == 0 or not lines[number - 1].startswith("|")):
            end = number
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            above = next((lines[k] for k in range(number - 1, -1, -1) if lines[k].strip()), "")
            body = [cells(row) for row in lines[number + 2 : end]]
            found.append(Table(page.name, number + 1, line, body, SOURCE.match(above)))
            number = end
        else:
            number += 1
    return found


def all_tables() -> list[Table]:
    return [table for page in sorted(DOCS.glob("*.md")) for table in tables(page)]


def runnable(command: str) -> bool:
    return command.startswith(("python -m hsc ", "make ")) and not any(p in command for p in PLACEHOLDERS)


def rerun(table: Table, out: Path) -> Path:
    assert table.source
    folder = out / f"{table.page.removesuffix('.md')}-{table.line}"
    folder.mkdir(parents=True, exist_ok=True)
    argv = [
        folder.as_posix() if word in ("DIR", "OUT") else word for word in shlex.split(table.source["command"])
    ]
    if argv[:3] == ["python", "-m", "hsc"]:
        argv[0] = sys.executable
    log = out / f"{folder.name}.txt"
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    with log.open("w", encoding="utf-8") as handle:
        subprocess.run(argv, cwd=ROOT, env=environment, stdout=handle, stderr=subprocess.STDOUT, check=False)
    return log


def main(argv: list[str]) -> int:
    wanted = [a for a in argv if not a.startswith("--")]  # PAGE.md or PAGE.md:LINE
    chosen = [
        t
        for t in all_tables()
        if t.benchmark and (not wanted or {t.page, f"{t.page}:{t.line}"} & set(wanted))
    ]
    out = ROOT / ".hsc" / "figures"
    done: dict[str, Path] = {}
    for table in chosen:
        command = table.source["command"] if table.source else "(no source line)"
        where = f"docs/{table.page}:{table.line}"
        if "--run" not in argv:
            print(f"{where}  {command}")
        elif command in done:
            print(f"{where}  the same command as above: {done[command].relative_to(ROOT)}")
        elif table.source and runnable(command):
            print(f"{where}  running {command}", flush=True)
            done[command] = rerun(table, out)
            print(f"  -> {done[command].relative_to(ROOT)}")
        else:
            print(f"{where}  not run (needs what its author had): {command}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
