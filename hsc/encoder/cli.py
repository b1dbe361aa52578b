"""``python -m hsc encoder train``: mine pairs, fine-tune, export to ONNX int8, keep the recipe."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from hsc.encoder.pairs import Pair, dedupe, mine_pairs, stdlib_training_sources
from hsc.encoder.sources import (
    TRAINING_LANGUAGES,
    cap_per_language,
    language_sources,
    package_names,
    parse_languages,
)
from hsc.encoder.train import NEGATIVES, Recipe, build_encoder


def add_encoder_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="encoder_command", required=True)
    defaults = Recipe()
    train = sub.add_parser(
        "train",
        help="fine-tune the encoder on doc → code pairs and export it to ONNX int8",
        description="Mine doc → code pairs (docstrings and doc comments, the quality corpus's rules), "
        "fine-tune the base model on them, export to ONNX int8 and write the recipe beside it. "
        "Without --from: the standard library outside the quality benchmark's packages.",
    )
    train.add_argument("--from", dest="sources", action="append", metavar="PATH", help="a folder or file")
    train.add_argument(
        "--out", default=".hsc/encoder", help="the tuned encoder's folder (default .hsc/encoder)"
    )
    train.add_argument("--base", default=defaults.base_model, help="the model to start from")
    train.add_argument("--epochs", type=int, default=defaults.epochs)
    train.add_argument("--batch", type=int, default=defaults.batch_size)
    train.add_argument("--lr", type=float, default=defaults.learning_rate)
    train.add_argument("--seed", type=int, default=defaults.seed)
    train.add_argument(
        "--held-out", type=float, default=defaults.held_out, help="share of files not trained on"
    )
    train.add_argument(
        "--negatives",
        choices=NEGATIVES,
        default=defaults.negatives,
        help="hybrid / dense: each pair also learns from the wrong code the base encoder ranks first "
        "(hybrid: cosine + BM25 as the hybrid search; dense: cosine alone)",
    )
    train.add_argument(
        "--body-comments",
        action="store_true",
        help="also pair each prose comment inside a function body with its function "
        "(better on questions about what a function does inside, a little worse on docstring ones)",
    )
    train.add_argument(
        "--class-pairs",
        action="store_true",
        help="also pair each Python class docstring's first sentence with the class's outline "
        "(its signature and its members'), what a class question's answer is scored by",
    )
    train.add_argument(
        "--languages",
        default="",
        metavar="LANG,...",
        help=f"also mine the pinned registry packages of these languages ({', '.join(TRAINING_LANGUAGES)} "
        "or all; fetched with apt-get download / npm pack, none a benchmark's package) besides the "
        "Python of --from or the standard library",
    )
    train.add_argument(
        "--downloads",
        default=".hsc/encoder-sources",
        help="where --languages' packages are fetched to and kept (default .hsc/encoder-sources)",
    )
    train.add_argument(
        "--pairs-per-language",
        type=int,
        default=defaults.pairs_per_language,
        help="at most this many pairs of each --languages language, drawn with --seed (0: all)",
    )
    train.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: all)")
    train.add_argument("--threads", type=int, default=defaults.threads)
    train.add_argument("--int8-only", action="store_true", help="keep only the int8 file, not the fp32 model")
    train.add_argument("--quiet", action="store_true")
    train.set_defaults(run=command_encoder_train)


def _with_negatives(pairs: list[Pair], recipe: Recipe, quiet: bool) -> list[Pair]:
    """Each pair with its hardest negative, ranked by the base model's int8 encoder."""
    from hsc.embed import EncoderSpec, encoder_cache_dir, make_embedder
    from hsc.encoder.negatives import hardest_negatives

    if not quiet:
        print(f"ranking the pairs' code with {recipe.base_model} for hard negatives", file=sys.stderr)
    spec = EncoderSpec(recipe.base_model, "onnx-int8", recipe.max_seq_length)
    embedder = make_embedder(spec, encoder_cache_dir(Path(tempfile.gettempdir()) / "hsc-encoder"), "cpu")
    if recipe.negatives == "dense":
        return hardest_negatives(pairs, embedder.embed, lexical_weight=0.0)
    return hardest_negatives(pairs, embedder.embed)  # ranked as the hybrid search ranks


def command_encoder_train(args: argparse.Namespace) -> int:
    if args.sources:
        paths = [Path(p) for p in args.sources]
        for path in paths:
            if not path.exists():
                raise FileNotFoundError(f"--from {path}: no such file or folder")
        sources = [(p, p.resolve().name) for p in paths]
    else:
        sources = stdlib_training_sources()
    if not 0 <= args.held_out < 1:
        raise ValueError(f"--held-out must be in [0, 1), got {args.held_out}")
    if args.pairs_per_language < 0:
        raise ValueError(f"--pairs-per-language must be 0 (all) or more, got {args.pairs_per_language}")
    recipe = Recipe(
        base_model=args.base,
        epochs=args.epochs,
        batch_size=args.batch,
        learning_rate=args.lr,
        seed=args.seed,
        held_out=args.held_out,
        threads=args.threads,
        max_steps=args.max_steps,
        negatives=args.negatives,
        body_comments=args.body_comments,
        class_pairs=args.class_pairs,
        languages=parse_languages(args.languages) if args.languages else (),
        pairs_per_language=args.pairs_per_language,
    )
    pairs = mine_pairs(sources, recipe.body_comments, recipe.class_pairs)
    if recipe.languages:
        mined = mine_pairs(language_sources(recipe.languages, Path(args.downloads)), recipe.body_comments)
        pairs = dedupe(pairs + cap_per_language(mined, recipe.pairs_per_language, recipe.seed))
    if not args.quiet:
        print(f"{len(pairs)} pairs from {len({p.path for p in pairs})} files", file=sys.stderr)
    if recipe.negatives != "none":
        pairs = _with_negatives(pairs, recipe, args.quiet)
    started = time.time()

    def progress(step: int, steps: int, loss: float) -> None:
        if not args.quiet:
            left = (time.time() - started) / step * (steps - step)
            print(f"\rstep {step}/{steps}  loss {loss:.3f}  {left:.0f} s left", end="", file=sys.stderr)

    # The standard library is named by its version (in the record), not this machine's path to it.
    names = [str(p) for p, _ in sources] if args.sources else [f"stdlib/{name}" for _, name in sources]
    names += package_names(recipe.languages)
    record = build_encoder(pairs, recipe, Path(args.out), names, progress, keep_model=not args.int8_only)
    if not args.quiet:
        print(file=sys.stderr)
    summary = {k: record[k] for k in ("steps", "final_loss", "train_cpu_s", "wall_s", "onnx_int8_bytes")}
    print(json.dumps({"out": args.out, **summary, "pairs": record["data"]["train_pairs"]}))
    return 0
