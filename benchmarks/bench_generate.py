"""Generator throughput on books of ~20K words (the issue asks for >= 50 books/s).

python benchmarks/bench_generate.py [--books 500] [--seed 0] [--translation-style realistic]
"""

from __future__ import annotations

import tempfile

import click

from generator import GeneratorConfig, generate_corpus


@click.command()
@click.option("--books", default=500, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--words", default=20000, show_default=True, help="Mean words per work.")
@click.option("--translation-style", default="faithful", show_default=True)
def main(books: int, seed: int, words: int, translation_style: str) -> None:
    """Generate into a temporary folder and print books/s."""
    # warm the word models and dictionaries so the figure is steady-state generation
    with tempfile.TemporaryDirectory() as tmp:
        warm = GeneratorConfig(
            seed=seed, n_books=20, words_min=500, words_max=800, translation_style=translation_style
        )
        generate_corpus(warm, tmp)
    cfg = GeneratorConfig(
        seed=seed,
        n_books=books,
        words_min=int(words * 0.75),
        words_max=int(words * 1.25),
        translation_style=translation_style,
    )
    with tempfile.TemporaryDirectory() as tmp:
        s = generate_corpus(cfg, tmp)
    click.echo(f"{s.n_books} books, {s.n_words / s.n_books:,.0f} words/book, {s.seconds:.2f} s")
    click.echo(f"RESULT books_per_s={s.books_per_s:.1f}")


if __name__ == "__main__":
    main()
