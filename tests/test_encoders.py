"""The encoder backends: the same model under torch and ONNX Runtime, each
with its own vectors in the cache, and a cold query that never imports torch."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLE_REPOS

from hsc.api import Index
from hsc.embed import DEFAULT_BACKEND, EncoderSpec, encoder_cache_dir, make_embedder, resolve_spec
from hsc.embed.onnx_backend import providers_for
from hsc.embed.onnx_export import export_files, load_exported
from hsc.embed.tuned import BUNDLED, RETIRED
from hsc.params import DEFAULT_ENCODER, DEFAULT_MODEL, Settings


def leaf_texts(repo: Path) -> list[str]:
    from hsc.chunk.ingest import load_file, walk_repository
    from hsc.chunk.tokens import get_counter
    from hsc.params import Parameters

    texts = []
    for rel_path in walk_repository(repo):
        texts += [
            leaf.embedding_text
            for leaf in load_file(repo, rel_path, Parameters(), Settings(), get_counter()).leaves
        ]
    return texts


@pytest.fixture(scope="module")
def sample_texts():
    return leaf_texts(SAMPLE_REPOS / "inventory_py")


@pytest.fixture(scope="module")
def stdlib_texts():
    """Real code of many lengths: the leaves of the standard library's json and email packages."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return leaf_texts(stdlib / "json") + leaf_texts(stdlib / "email")[::3]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    return encoder_cache_dir(tmp_path_factory.mktemp("encoders"))


@pytest.fixture(scope="module")
def onnx_embedders(onnx_cache):
    cache = onnx_cache
    base = {
        backend: make_embedder(
            resolve_spec(
                Settings(
                    embedding_model=DEFAULT_MODEL, embedding_backend=backend, embedding_long_leaves="truncate"
                ),
                None,
            ),
            cache,
            "cpu",
        )
        for backend in ("onnx", "onnx-int8")
    }
    return {**base, "default": make_embedder(resolve_spec(Settings(), None), cache, "cpu")}


def test_onnx_fp32_gives_torchs_vectors_and_int8_stays_close(torch_embedder, onnx_embedders, sample_texts):
    reference = torch_embedder.embed(sample_texts)
    fp32 = onnx_embedders["onnx"].embed(sample_texts, batch_size=7)
    assert fp32.shape == reference.shape
    assert np.einsum("ij,ij->i", fp32, reference).min() > 0.9999
    int8 = onnx_embedders["onnx-int8"].embed(sample_texts)
    agreement = np.einsum("ij,ij->i", int8, reference)
    assert agreement.mean() > 0.95 and agreement.min() > 0.8  # int8 weights, 128 word pieces
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)


def test_the_graph_built_without_torch_gives_torchs_vectors_on_real_code(
    torch_embedder, onnx_cache, onnx_embedders, stdlib_texts
):
    # The base model is a BERT folder: both ONNX files are written from its weights, not by torch.
    for backend in ("onnx", "onnx-int8"):
        meta_file = export_files(onnx_embedders[backend].spec, onnx_cache)[1]
        assert json.loads(meta_file.read_text())["made_by"] == "onnx.helper", backend
    assert len(stdlib_texts) > 150
    reference = torch_embedder.embed(stdlib_texts)
    fp32 = np.einsum("ij,ij->i", onnx_embedders["onnx"].embed(stdlib_texts), reference)
    assert fp32.mean() >= 0.9999 and fp32.min() > 0.999
    # int8 against fp32 at its own window of 128 word pieces: what quantisation alone changes.
    at_128 = make_embedder(EncoderSpec("all-MiniLM-L6-v2", "onnx", 128), onnx_cache, "cpu")
    int8 = np.einsum("ij,ij->i", onnx_embedders["onnx-int8"].embed(stdlib_texts), at_128.embed(stdlib_texts))
    assert int8.mean() > 0.98 and int8.min() > 0.95


def test_torchs_export_stays_the_fallback_and_an_earlier_one_stays_in_use(tmp_path, stdlib_texts):
    from hsc.embed.base import resolve_model_path
    from hsc.embed.onnx_export import buildable_reason, export_with_torch

    # A model the builder does not know (here: one that lower-cases texts itself) goes to torch.
    folder = tmp_path / "lowercasing-minilm"
    shutil.copytree(resolve_model_path("all-MiniLM-L6-v2"), folder)
    config = json.loads((folder / "sentence_bert_config.json").read_text())
    (folder / "sentence_bert_config.json").write_text(json.dumps({**config, "do_lower_case": True}))
    assert "lower-cases" in buildable_reason(EncoderSpec(str(folder), "onnx-int8", 128))
    assert export_files(EncoderSpec(str(folder), "onnx-int8", 128), tmp_path)[0].name.endswith("-v1.onnx")
    # An int8 export torch wrote into a cache earlier is the one loaded there, so the vectors
    # made with it stay comparable; a cache without one gets the built graph.
    base = Settings(
        embedding_model=DEFAULT_MODEL, embedding_backend="onnx-int8", embedding_long_leaves="truncate"
    )
    spec = resolve_spec(base, None)
    export_with_torch(spec, tmp_path / "earlier")
    earlier = load_exported(spec, tmp_path / "earlier", "cpu")
    assert (
        json.loads(export_files(spec, tmp_path / "earlier")[1].read_text())["made_by"] == "torch.onnx.export"
    )
    built = load_exported(spec, tmp_path / "fresh", "cpu")
    assert json.loads(export_files(spec, tmp_path / "fresh")[1].read_text())["made_by"] == "onnx.helper"
    # The two int8 files are quantised from graphs of the same arithmetic: close, not identical.
    agreement = np.einsum("ij,ij->i", earlier.embed(stdlib_texts), built.embed(stdlib_texts))
    assert agreement.mean() > 0.995 and agreement.min() > 0.98


def test_every_spec_has_its_own_cache_key():
    torch_spec = resolve_spec(Settings(embedding_backend="torch"), None)
    assert torch_spec.key == "all-MiniLM-L6-v2"  # the seed's key: existing caches stay valid
    keys = {resolve_spec(Settings(embedding_backend=b), None).key for b in ("torch", "onnx", "onnx-int8")}
    assert len(keys) == 3
    for key in keys | {resolve_spec(Settings(embedding_backend="torch", embedding_max_tokens=64), None).key}:
        assert EncoderSpec.from_key(key).key == key
    assert resolve_spec(Settings(), None).backend == DEFAULT_BACKEND
    # auto keeps the backend that made a repository's vectors; a named one wins.
    assert resolve_spec(Settings(), "all-MiniLM-L6-v2") == torch_spec
    assert resolve_spec(Settings(embedding_backend="onnx"), "all-MiniLM-L6-v2").backend == "onnx"
    with pytest.raises(ValueError, match="embedding_backend must be"):
        resolve_spec(Settings(embedding_backend="tpu"), None)


def test_a_device_this_runtime_lacks_is_a_clear_error():
    import onnxruntime

    available = onnxruntime.get_available_providers()
    assert providers_for("auto", available)[-1] == "CPUExecutionProvider"
    if "CUDAExecutionProvider" not in available:
        with pytest.raises(RuntimeError, match="device=cuda needs"):
            providers_for("cuda", available)


def test_switching_backend_is_explicit_and_each_keeps_its_vectors(tmp_path, torch_embedder, onnx_embedders):
    repo = tmp_path / "inventory_py"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", repo)
    with Index.open(tmp_path / "index.db", settings=Settings(embedding_backend="onnx-int8")) as index:
        index.use_embedder(onnx_embedders["default"])
        first = index.index(repo)
        key = index.repositories()[0]["embedding_model"]
        assert EncoderSpec.from_key(key).backend == "onnx-int8"
        hit = index.query("apply a percentage discount to a price").results[0]
        assert hit.scope.endswith("apply_discount")
    # A torch run on the same database: 'auto' keeps the recorded backend ...
    with Index.open(tmp_path / "index.db", settings=Settings()) as index:
        index.use_embedder(onnx_embedders["default"])
        assert index.index(repo).leaves_embedded == 0
        assert index.query("apply a percentage discount to a price").results[0].scope == hit.scope
    # ... a named other backend will not query vectors it did not make ...
    with Index.open(tmp_path / "index.db", settings=Settings(embedding_backend="torch")) as index:
        with pytest.raises(ValueError, match="vectors were made by"):
            index.query("apply a percentage discount")
        index.use_embedder(torch_embedder)
        # ... and indexing with it re-embeds everything, under its own key.
        again = index.index(repo)
        assert again.leaves_embedded == first.leaves_embedded > 0
        assert index.repositories()[0]["embedding_model"] == "all-MiniLM-L6-v2"
        # Definition and outline vectors are cached too.
        made = first.leaves_embedded + first.definitions_embedded + first.outlines_embedded
        assert index.stats()["tables"]["embeddings"] == 2 * made


def test_a_cold_query_on_an_onnx_index_never_imports_torch(tmp_path, onnx_embedders):
    repo = tmp_path / "inventory_py"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", repo)
    database = tmp_path / "index.db"
    with Index.open(database, settings=Settings(embedding_backend="onnx-int8")) as index:
        index.use_embedder(onnx_embedders["default"])
        index.index(repo)
    program = (
        "import sys, json\n"
        "from hsc.cli import main\n"
        f"code = main(['query', 'apply a discount', '--db', {str(database)!r}, '--json'])\n"
        "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules)\n"
        "print(json.dumps({'code': code, 'heavy': heavy}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the tests' shared HSC_ENCODER_DIR: no export here
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert json.loads(lines[0])["results"][0]["scope"].endswith("discount")
    assert json.loads(lines[-1]) == {"code": 0, "heavy": []}


@pytest.mark.parametrize("rule", ["mean", "head+mean"])
def test_a_long_leaf_read_whole_covers_its_tail_and_short_ones_stay(tmp_path, rule):
    cache = encoder_cache_dir(tmp_path)
    onnx = Settings(embedding_backend="onnx", embedding_max_tokens=64, embedding_long_leaves="truncate")
    whole_spec = resolve_spec(dataclasses.replace(onnx, embedding_long_leaves=rule), None)
    assert whole_spec.key.endswith(f":64+{rule}") and EncoderSpec.from_key(whole_spec.key) == whole_spec
    whole = make_embedder(whole_spec, cache, "cpu")
    cut = make_embedder(resolve_spec(onnx, None), cache, "cpu")
    head = "def total(rows):\n" + "    value = value + rows[0]\n" * 30
    texts = [
        head + "    return parse_invoice_dates(value)",
        head + "    raise TimeoutError('socket closed')",
        "x = 1",
    ]
    assert cut.piece_counts(texts[:1])[0] > 3 * 64  # the tails lie past the first window
    cut_rows, whole_rows = cut.embed(texts, batch_size=1), whole.embed(texts, batch_size=1)
    assert np.dot(cut_rows[0], cut_rows[1]) > 0.9999  # truncated at 64: the tails are never read
    # Read whole, the two leaves differ by their tails.
    assert np.dot(whole_rows[0], whole_rows[1]) < np.dot(cut_rows[0], cut_rows[1]) - 1e-3
    assert np.dot(whole_rows[2], cut_rows[2]) > 0.9999  # a text within one window is read as before
    if rule == "head+mean":  # the head keeps its pull: nearer the truncated vector than the mean alone
        mean = make_embedder(dataclasses.replace(whole_spec, long_leaves="mean"), cache, "cpu")
        mean_rows = mean.embed(texts, batch_size=1)
        assert np.dot(whole_rows[0], cut_rows[0]) > np.dot(mean_rows[0], cut_rows[0]) + 1e-3
    assert whole.truncated == 0 and cut.truncated == 2
    assert np.allclose(np.linalg.norm(whole_rows, axis=1), 1.0, atol=1e-5)
    # torch reads one window whatever the rule: the seed's encoder, under the seed's key.
    assert (
        resolve_spec(Settings(embedding_backend="torch", embedding_long_leaves=rule), None).key
        == DEFAULT_MODEL
    )


class _RecordingSession:
    """A real ONNX Runtime session that notes how many rows each run was given."""

    def __init__(self, session):
        self.session, self.rows = session, []

    def run(self, outputs, feeds):
        self.rows.append(len(feeds["input_ids"]))
        return self.session.run(outputs, feeds)


def test_on_the_cpu_each_row_runs_alone_so_a_vector_depends_on_its_text_only(tmp_path):
    # int8 quantises a run's activations together: batched, a leaf's vector moved with the
    # leaves beside it. Run alone, it is the same whatever the batch.
    embedder = make_embedder(resolve_spec(Settings(), None), encoder_cache_dir(tmp_path), "cpu")
    assert embedder.spec.backend == "onnx-int8"
    leaf = "def total(rows):\n    return sum(row.price * row.count for row in rows)"
    neighbours = ["x = 1", "class Spool:\n" + "    buffer = bytearray(4096) * 16\n" * 40]
    recorder = _RecordingSession(embedder._session)
    embedder._session = recorder
    rows = [embedder.embed([leaf, other], batch_size=2)[0] for other in neighbours]
    assert np.array_equal(rows[0], rows[1])
    assert set(recorder.rows) == {1}


def test_batched_runs_of_long_texts_hold_no_more_rows_than_the_batch(tmp_path):
    # Where rows run in batches (an accelerator), a batch of long texts read whole must not
    # hand the model every window at once (an encoder process held 765 MB on pip that way).
    spec = resolve_spec(
        Settings(embedding_backend="onnx", embedding_max_tokens=64, embedding_long_leaves="head+mean"), None
    )
    embedder = make_embedder(spec, encoder_cache_dir(tmp_path), "cpu")
    texts = [
        f"def part_{n}(rows):\n" + f"    total = total + rows[{n}] * weight\n" * (8 + 6 * n) for n in range(4)
    ]
    windows = [-(-(int(count) - 2) // 62) for count in embedder.piece_counts(texts)]  # 62 pieces + 2 special
    assert sum(windows[:2]) > 2 and sum(windows[2:]) > 2  # each batch of two has more windows than texts
    alone = embedder.embed(texts, batch_size=1)
    embedder.run_size = 0  # as on an accelerator: runs of up to a batch
    recorder = _RecordingSession(embedder._session)
    embedder._session = recorder
    together = embedder.embed(texts, batch_size=2)
    assert max(recorder.rows) == 2 and sum(recorder.rows) == sum(windows)
    assert np.allclose(np.sum(alone * together, axis=1), 1.0, atol=1e-5)


def test_the_default_is_the_bundled_tuned_encoder_and_moves_no_repository(
    tmp_path, onnx_embedders, sample_texts
):
    spec = resolve_spec(Settings(), None)
    assert spec.key == f"{DEFAULT_ENCODER}@onnx-int8:128+head+mean"
    cache = tmp_path / "cache"
    tuned = make_embedder(spec, cache, "cpu")
    assert not cache.exists()  # the package's own int8 file: no export, no download
    vectors = tuned.embed(sample_texts[:8])
    base = onnx_embedders["onnx-int8"].embed(sample_texts[:8])
    agreement = np.einsum("ij,ij->i", vectors, base)
    assert 0.5 < agreement.mean() < 0.99  # the same model, moved by tuning
    record = json.loads((BUNDLED[DEFAULT_ENCODER] / "encoder.json").read_text())
    assert record["model"] == DEFAULT_ENCODER and record["int8_reduce_range"] is True
    assert record["onnx_int8_bytes"] == (BUNDLED[DEFAULT_ENCODER] / "encoder-int8.onnx").stat().st_size
    # torch and onnx have no tuned weights to run: they run the base model, under its own key.
    assert resolve_spec(Settings(embedding_backend="torch"), None).key == DEFAULT_MODEL
    assert resolve_spec(Settings(embedding_backend="onnx"), None).model == DEFAULT_MODEL
    # A repository indexed before (base model, int8) keeps its encoder under the default settings ...
    before = f"{DEFAULT_MODEL}@onnx-int8:128"
    assert resolve_spec(Settings(), before).key == before
    # ... and moves only when a model or backend is named.
    assert (
        resolve_spec(Settings(embedding_model=DEFAULT_ENCODER, embedding_backend="onnx-int8"), before) == spec
    )
    named = Settings(embedding_model=DEFAULT_MODEL, embedding_long_leaves="truncate")
    assert resolve_spec(named, spec.key).key == before


@pytest.mark.parametrize("retired", sorted(RETIRED))
def test_a_repository_a_retired_bundled_encoder_indexed_is_re_embedded_never_mixed(tmp_path, retired):
    repo = tmp_path / "inventory_py"
    shutil.copytree(SAMPLE_REPOS / "inventory_py", repo)
    database = tmp_path / "index.db"
    with Index.open(database) as index:
        first = index.index(repo)
    # Make it what an earlier version left: every key names the encoder that left the package.
    old_key = f"{retired}@onnx-int8:128+head+mean"
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE repositories SET embedding_model = ?", (old_key,))
        connection.execute("UPDATE files SET embedding_model = ?", (old_key,))
        connection.execute("UPDATE hierarchies SET embedding_model = ?", (old_key,))
        connection.execute("UPDATE embeddings SET model = ?", (old_key,))
    with Index.open(database) as index:
        with pytest.raises(
            ValueError, match=f"{retired} made this repository's vectors.*index the repository again"
        ):
            index.query("apply a percentage discount to a price")
        again = index.index(repo)
        assert again.leaves_embedded == first.leaves_embedded > 0  # every vector made anew
        assert index.repositories()[0]["embedding_model"] == resolve_spec(Settings(), None).key
        assert (
            index.query("apply a percentage discount to a price").results[0].scope.endswith("apply_discount")
        )
