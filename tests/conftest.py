"""Shared fixtures: the real embedding model, loaded once per test session."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# One ONNX export for every database the tests make (and the CLI subprocesses they run).
os.environ.setdefault("HSC_ENCODER_DIR", str(ROOT / ".pytest_cache" / "hsc-encoders"))

SAMPLE_REPOS = ROOT / "hsc" / "samples"


@pytest.fixture(scope="session")
def embedder():
    """The encoder users get by default (onnx-int8), in this process."""
    from hsc.embed import encoder_cache_dir, make_embedder, spec_for
    from hsc.params import Settings

    return make_embedder(spec_for(Settings()), encoder_cache_dir(ROOT / ".pytest_cache"), "cpu", processes=1)


@pytest.fixture(scope="session")
def torch_embedder():
    """The seed's torch encoder, for tests that compare the backends with it."""
    from hsc.embed import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def index_files(embedder):
    """Makes a database ``root / "index.db"`` of a repository ``root / name`` holding ``files`` (path
    -> text), indexed with ``params``, and returns it open; the caller closes it."""
    from hsc.api import Index

    def make(root: Path, name: str, files: dict[str, str], params=None):
        repo = root / name
        repo.mkdir()
        for path, text in files.items():
            (repo / path).write_text(text)
        index = Index.open(root / "index.db", embedder=embedder)
        index.index(repo, params=params)
        return index

    return make


@pytest.fixture(scope="session")
def indexed_samples(tmp_path_factory, embedder):
    """All three sample repositories indexed once into one database (copied
    first, so tests may read but never change the bundled ones)."""
    import shutil

    from hsc.api import Index

    root = tmp_path_factory.mktemp("samples")
    for repo in sorted(p for p in SAMPLE_REPOS.iterdir() if p.is_dir()):
        shutil.copytree(repo, root / repo.name)
    index = Index.open(root / "index.db", embedder=embedder)
    reports = {repo.name: index.index(repo) for repo in sorted(root.iterdir()) if repo.is_dir()}
    yield index, root, reports
    index.close()
