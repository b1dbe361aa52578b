"""The command-line transcripts of the README and the documentation (``docs/*.md``), run as written.

A transcript is a ```text block whose lines start with ``$ python -m hsc``;
the lines under a command are what it printed on stdout. ``run_block`` runs
the commands of one block from a fresh copy of the bundled sample (the paths
in the pages are relative to the repository's top folder), and ``compare``
says where a page differs: times may differ (they are the machine's),
scores by the int8 encoder's batch noise, everything else (counts, ranks,
paths, scopes, ids) not at all.

    python tests/readme_transcripts.py           # check: prints the differences, exit 1 if any
    python tests/readme_transcripts.py --write   # rewrite the pages' transcripts from a fresh run

``make readme`` runs the second; ``tests/test_readme.py`` the first.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# Every page that may hold a transcript: the README, then the documentation site's pages.
PAGES = (README, *sorted((ROOT / "docs").glob("*.md")))
PROMPT = "$ python -m hsc "
# What a rerun may change: times (seconds, milliseconds), and scores within the int8 encoder's noise.
_TIME = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")
_SCORE = re.compile(r"(?<![\w.:/-])[01]\.\d{3}(?![\d])")
SCORE_TOLERANCE = 0.01


@dataclass
class Transcript:
    start: int  # offsets of the block's body in the README
    end: int
    commands: list[str]  # each with its trailing "# comment", as written
    outputs: list[list[str]]  # what the README shows under each


def transcripts(text: str) -> list[Transcript]:
    found = []
    for match in re.finditer(r"```text\n(.*?)```", text, flags=re.DOTALL):
        body = match.group(1)
        if PROMPT not in body:
            continue
        commands: list[str] = []
        outputs: list[list[str]] = []
        for line in body.splitlines():
            if line.startswith(PROMPT):
                commands.append(line[2:])
                outputs.append([])
            elif commands and line.strip():
                outputs[-1].append(line)
        found.append(Transcript(match.start(1), match.end(1), commands, outputs))
    return found


def run_block(commands: list[str], workdir: Path) -> list[list[str]]:
    """Each command's stdout lines, run in ``workdir`` (which holds ``hsc/samples``)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    printed = []
    for command in commands:
        argv = shlex.split(command, comments=True)
        assert argv[:2] == ["python", "-m"], command
        done = subprocess.run(
            [sys.executable, *argv[1:]], cwd=workdir, env=environment, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"{command}: exit {done.returncode}\n{done.stderr}")
        # The CLI names the folder it indexed by its full path: the README's is the checkout's.
        shown = done.stdout.replace(f"{workdir.resolve()}/", "").replace(f"{workdir}/", "")
        printed.append([line for line in shown.splitlines() if line.strip()])
    return printed


def fresh_checkout(folder: Path) -> Path:
    """A folder laid out like the repository's top, with a copy of the sample the README indexes."""
    shutil.copytree(
        ROOT / "hsc" / "samples" / "inventory_py",
        folder / "hsc" / "samples" / "inventory_py",
        ignore=shutil.ignore_patterns(".hsc"),
    )
    return folder


def _scores(line: str) -> list[float]:
    return [float(value) for value in _SCORE.findall(_TIME.sub("", line))]


def _shape(line: str) -> str:
    """The line with its times and scores blanked: what must match exactly."""
    return _SCORE.sub("S", _TIME.sub("T", line))


def compare(shown: list[str], printed: list[str]) -> list[str]:
    """Where ``shown`` (the README) and ``printed`` (a run) differ beyond times and score noise."""
    problems = []
    if len(shown) != len(printed):
        problems.append(f"{len(shown)} lines shown, {len(printed)} printed")
    for was, now in zip(shown, printed):
        if _shape(was) != _shape(now):
            problems.append(f"README: {was}\n   run: {now}")
            continue
        off = [(a, b) for a, b in zip(_scores(was), _scores(now)) if abs(a - b) > SCORE_TOLERANCE]
        if off:
            problems.append(f"scores {off}: README: {was}\n   run: {now}")
    return problems


def render(transcript: Transcript, printed: list[list[str]]) -> str:
    lines = []
    for command, output in zip(transcript.commands, printed):
        if lines:
            lines.append("")
        lines.append(f"$ {command}")
        lines.extend(output)
    return "\n".join(lines) + "\n"


def check_page(page: Path, write: bool) -> tuple[int, list[str]]:
    """The page's transcripts rerun: how many, and where they differ; with ``write``, rewritten."""
    text = page.read_text(encoding="utf-8")
    found = transcripts(text)
    problems: list[str] = []
    rewritten = text
    for transcript in reversed(found):
        with tempfile.TemporaryDirectory() as folder:
            printed = run_block(transcript.commands, fresh_checkout(Path(folder)))
        for command, shown, output in zip(transcript.commands, transcript.outputs, printed):
            problems += [f"{page.name}: {command}\n  {problem}" for problem in compare(shown, output)]
        rewritten = rewritten[: transcript.start] + render(transcript, printed) + rewritten[transcript.end :]
    if write and found:
        page.write_text(rewritten, encoding="utf-8")
        print(f"rewrote {len(found)} transcripts in {page.relative_to(ROOT)}")
    return len(found), problems


def main(argv: list[str]) -> int:
    count, problems = 0, []
    for page in PAGES:
        found, differ = check_page(page, "--write" in argv)
        count, problems = count + found, problems + differ
    if "--write" in argv:
        return 0
    print("\n".join(problems) or f"{count} transcripts hold")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
