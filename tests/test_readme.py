"""What the README and the documentation say about the command line, the parameters and the app
holds for this code.

The transcripts are run as written, wherever they are (``tests/readme_transcripts.py``; ``make readme``
rewrites them from a fresh run); the command table is compared with the parser (the parameter and
command-line reference pages are written from the code: ``tests/test_docs.py``); the figure quoted
from a command is that command's output; the README stays a front door of at most 300 lines.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
import readme_transcripts

from hsc.bench import SUITES
from hsc.cli import build_parser
from hsc.params import SEED_PARAMETERS, Parameters

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
README_MOST_LINES = 300


def page(name: str) -> str:
    """A page of the documentation site (docs/NAME)."""
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def subcommands() -> dict[str, object]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return dict(action.choices)  # type: ignore[attr-defined]


def test_the_command_line_transcripts_print_what_the_pages_show(tmp_path: Path) -> None:
    found = {
        path.name: readme_transcripts.transcripts(path.read_text(encoding="utf-8"))
        for path in readme_transcripts.PAGES
    }
    assert found["cli.md"], "no transcript on the command-line page"
    number = 0
    for name, transcripts in found.items():
        for transcript in transcripts:
            number += 1
            workdir = readme_transcripts.fresh_checkout(tmp_path / str(number))
            printed = readme_transcripts.run_block(transcript.commands, workdir)
            problems = [
                f"{command}\n  {problem}"
                for command, shown, output in zip(
                    transcript.commands, transcript.outputs, printed, strict=True
                )
                for problem in readme_transcripts.compare(shown, output)
            ]
            assert not problems, f"{name}'s transcript is stale (make readme):\n" + "\n".join(problems)


def test_the_readme_is_a_front_door() -> None:
    lines = README.splitlines()
    assert len(lines) <= README_MOST_LINES, f"README.md has {len(lines)} lines; the rest belongs in docs/"
    # The contributor's two set-up commands come first, as they always have.
    assert lines[3:5] == [
        "make app    # set-up on a fresh machine, then the app on hsc/samples/inventory_py at http://127.0.0.1:8501",
        "make test   # set-up on a fresh machine, then ruff and the whole test suite",
    ]
    # One screenshot of the app, and links into the docs that resolve to pages that exist.
    assert len(re.findall(r"!\[[^]]*\]\(docs/screenshots/[^)]+\.png\)", README)) == 1
    linked = set(re.findall(r"\]\((docs/[^)#]+)", README))
    assert linked, "the README links into no page of the docs"
    assert all((ROOT / path).exists() for path in linked), [p for p in linked if not (ROOT / p).exists()]


def test_the_comparison_tells_noise_from_drift() -> None:
    shown = ["  1  0.779  inventory/pricing.py:73-82  inventory.pricing.apply_discount  parent mid:36 0.565"]
    jitter = ["  1  0.781  inventory/pricing.py:73-82  inventory.pricing.apply_discount  parent mid:36 0.563"]
    assert readme_transcripts.compare(shown, jitter) == []
    for drifted in (
        shown[0].replace("0.779", "0.712"),  # a score
        shown[0].replace("mid:36", "mid:18"),  # an id
        shown[0].replace("73-82", "73-83"),  # a line range
    ):
        assert readme_transcripts.compare(shown, [drifted])
    timed = ["query: x  (hybrid, 16 leaves compared of 95, 10.49 ms)", "indexed: 95 leaves in 9.7s"]
    assert (
        readme_transcripts.compare(timed, [t.replace("10.49", "3.2").replace("9.7", "41.0") for t in timed])
        == []
    )
    assert readme_transcripts.compare(timed, [timed[0].replace("16 leaves", "50 leaves"), timed[1]])


def test_the_command_table_names_every_subcommand_and_bench_suite() -> None:
    table = page("cli.md")
    named = set(re.findall(r"^\| `([a-z]+)", table, flags=re.MULTILINE))
    assert named == set(subcommands()), named ^ set(subcommands())
    benched = {
        suite
        for row in re.findall(r"^\| `bench ([^`]+)`", table, flags=re.MULTILINE)
        for suite in re.split(r"\\?\|", row.split()[0])
    }
    assert benched <= {"perf", *SUITES}, benched - {"perf", *SUITES}


def test_what_the_readme_says_takes_db_does() -> None:
    without = {name for name, parser in subcommands().items() if "--db" not in parser._option_string_actions}
    assert without == {"params", "encoder"}
    assert "Every subcommand but `params` and `encoder` takes `--db FILE`" in page("cli.md")


def test_the_additions_to_the_seeds_parameters_are_the_ones_named() -> None:
    additions = {f.name for f in fields(Parameters)} - SEED_PARAMETERS
    sentence = re.search(
        r"hsc's additions to the eight parameters of the method \(([^)]*)\)", page("parameters.md")
    )
    assert sentence, "the parameters page no longer names hsc's additions to the seed's parameters"
    assert set(re.findall(r"`(\w+)`", sentence.group(1))) == additions


@pytest.mark.parametrize("quoted", ["the Walkthrough's cosine with its own group against another's"])
def test_a_figure_quoted_from_a_command_is_what_the_command_prints(quoted: str, tmp_path: Path) -> None:
    match = re.search(
        r"\((\d\.\d\d) against (\d\.\d\d) on `inventory_py`, default set:\s*`(python -c \"[^`]+\")`",
        page("app-pages.md"),
    )
    assert match, quoted
    own, other, command = float(match.group(1)), float(match.group(2)), match.group(3)
    workdir = readme_transcripts.fresh_checkout(tmp_path)
    readme_transcripts.run_block(["python -m hsc index hsc/samples/inventory_py --quiet"], workdir)
    code = re.fullmatch(r'python -c "(.*)"', command, flags=re.DOTALL)
    assert code
    done = subprocess.run(
        [sys.executable, "-c", code.group(1)],
        cwd=workdir,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"},
        check=True,
    )
    printed_own, printed_other = map(float, done.stdout.split())
    assert abs(printed_own - own) <= 0.01 and abs(printed_other - other) <= 0.01, done.stdout


def test_no_test_asserts_a_speed() -> None:
    """The performance page says speed targets live in the benchmarks: no test compares a clock reading."""
    timed = re.compile(r"assert .*(perf_counter|monotonic|elapsed|_seconds|_ms)\b.*<")
    found = [
        f"{path.name}:{number}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        if path.name != Path(__file__).name  # the pattern above
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if timed.search(line) and "timeout" not in line and "deadline" not in line
    ]
    assert found == []
    assert "No test asserts a speed" in page("performance.md")


def test_each_headline_figure_has_its_command_and_is_its_pages_figure() -> None:
    start = README.index("## Headline figures")
    rows = [
        line
        for line in README[start:].split("\n## ", 1)[0].splitlines()
        if line.startswith("| ") and "---" not in line
    ][1:]
    assert len(rows) >= 5
    for row in rows:
        what, figure, command, more = (cell.strip() for cell in row.strip().strip("|").split(" | "))
        assert re.fullmatch(r"`(python -m hsc bench [^`]+|make [\w-]+)`", command), (what, command)
        linked = re.fullmatch(r"\[[^]]+\]\((docs/[\w.-]+\.md)\)", more)
        assert linked, (what, more)
        page_text = (ROOT / linked.group(1)).read_text(encoding="utf-8")
        for number in re.findall(r"\d[\d,.]*\d|\d", figure.replace("**", "")):
            found = re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d])", page_text)
            assert found, f"{what}: {number} is not on {linked.group(1)}"


def test_the_readme_commands_are_ones_the_parser_takes() -> None:
    commands = [
        shlex.split(line, comments=True)
        for block in re.findall(r"```sh\n(.*?)```", README, flags=re.DOTALL)
        for line in block.splitlines()
        if line.startswith("hsc ")
    ]
    assert len(commands) >= 5
    parser = build_parser()
    for argv in commands:
        parsed = parser.parse_args(argv[1:])  # argparse exits (a test failure) on what it does not take
        assert parsed.command == argv[1]
