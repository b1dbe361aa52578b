"""Shared fixtures: the real embedding model, loaded once per test session."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SAMPLE_REPOS = ROOT / "sample_repos"


@pytest.fixture(scope="session")
def embedder():
    from hsc.embed import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()
