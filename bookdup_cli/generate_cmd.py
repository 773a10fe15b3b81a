"""`bookdup generate`: write a synthetic corpus with exact ground truth."""

from __future__ import annotations

from pathlib import Path

import click

from generator import GeneratorConfig, generate_corpus
from generator.translate import STYLES


def _range(text: str, cast: type) -> tuple:
    lo, _, hi = text.partition("-")
    return (cast(lo), cast(hi or lo))


@click.command("generate")
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--books", default=100, show_default=True, help="Books to write.")
@click.option("--seed", default=0, show_default=True)
@click.option(
    "--languages", default="en,de,fr,es", show_default=True, help="Comma-separated ISO codes."
)
@click.option("--words-min", default=3000, show_default=True)
@click.option("--words-max", default=20000, show_default=True)
@click.option(
    "--noise",
    default="0.0-0.02",
    show_default=True,
    help="Character error rate range LO-HI (0.0-0.1); each noisy book draws one.",
)
@click.option("--clean", default=0.3, show_default=True, help="Share of books without noise.")
@click.option("--editions", default=0.4, show_default=True, help="Share of works re-edited.")
@click.option("--volumes", default=0.15, show_default=True, help="Share of works in volumes.")
@click.option("--translations", default=0.3, show_default=True, help="Share of works translated.")
@click.option("--anthologies", default=0.03, show_default=True, help="Share of anthology books.")
@click.option(
    "--abridged",
    default=0.0,
    show_default=True,
    help="Share of works with an abridged edition (paragraphs cut throughout: ABRIDGED).",
)
@click.option(
    "--retranslations",
    default=0.0,
    show_default=True,
    help="Share of translated works translated again into the same language by another "
    "(realistic) translator: SAME_WORK.",
)
@click.option(
    "--formats",
    default="txt:0.88,jsonl:0.04,alto:0.04,hocr:0.04",
    show_default=True,
    help="format:weight list (txt, jsonl, alto, hocr).",
)
@click.option("--books-dir", default="books", show_default=True, help="Folder for the books.")
@click.option(
    "--translation-style",
    type=click.Choice(sorted(STYLES)),
    default="faithful",
    show_default=True,
    help="faithful: word by word through the detector's own lexicon (flattering); realistic: "
    "also synonyms, paraphrase, dropped / added words, sentence reordering and transliterated "
    "names, calibrated to score like real translations (benchmarks/calibrate_translations.py).",
)
def generate(
    out_dir: Path,
    books: int,
    seed: int,
    languages: str,
    words_min: int,
    words_max: int,
    noise: str,
    clean: float,
    editions: float,
    volumes: float,
    translations: float,
    anthologies: float,
    abridged: float,
    retranslations: float,
    formats: str,
    books_dir: str,
    translation_style: str,
) -> None:
    """Generate a corpus of OUT_DIR/books plus books.jsonl and ground_truth.jsonl.

    Works are fresh prose from word models derived from real texts; their books are editions,
    reprints, exact copies, noisy scans, volumes, abridgements, anthologies and FreeDict
    translations (``--translation-style realistic`` for translations that go beyond the
    lexicon; ``--retranslations`` for a second translation into one language).
    """
    fmt = []
    for item in formats.split(","):
        name, _, weight = item.partition(":")
        fmt.append((name.strip(), float(weight or 1)))
    config = GeneratorConfig(
        seed=seed,
        n_books=books,
        languages=tuple(x.strip() for x in languages.split(",") if x.strip()),
        words_min=words_min,
        words_max=words_max,
        noise=_range(noise, float),
        clean_fraction=clean,
        edition_fraction=editions,
        volume_fraction=volumes,
        translation_fraction=translations,
        anthology_fraction=anthologies,
        abridged_fraction=abridged,
        retranslation_fraction=retranslations,
        formats=tuple(fmt),
        books_dir=books_dir,
        translation_style=translation_style,
    )
    try:
        s = generate_corpus(config, out_dir)
    except (ValueError, FileNotFoundError) as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"{s.n_books} books of {s.n_works} works ({s.n_words:,} words) in {out_dir}")
    click.echo("books: " + ", ".join(f"{k} {v}" for k, v in sorted(s.books_by_kind.items())))
    click.echo("pairs: " + ", ".join(f"{k} {v}" for k, v in sorted(s.pairs_by_relation.items())))
    click.echo(f"{s.seconds:.1f} s, {s.books_per_s:.1f} books/s")
