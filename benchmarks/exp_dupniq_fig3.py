"""DUPNIQ Fig. 3 re-run on real text: DUPNIQ-cs and -its vs text overlap and OCR noise.

The paper (Yalniz, Can & Manmatha 2011, §5.1) takes a clean Gutenberg book X, builds a
synthetic Y of the same length that keeps only part of X's text and fills the rest from another
book, adds uniform character noise to Y, and averages the scores over 20 runs. Two scenarios:
books by different authors, and two novels by the same author. We do the same with the real
books in ../shared/data/gutenberg, with these choices:

* the PG header/footer is stripped first: the licence text is identical in X and in the filler
  book and would count as "overlap" (the dedup job drops such collection-wide words by max-df);
* Y = filler text, then a contiguous window of ``overlap`` % of X's lines at a random place,
  then more filler, |Y| = |X| in lines; pages of 40 lines as the text reader makes them;
* noise: ``generator.noise.add_noise`` (each character inserted-before / deleted /
  replaced with probability ``rate``, uniform), applied to Y only;
* scores via the core: ``extract_features`` → ``verify_pair(threshold=0)`` (every pair
  aligned), averaged over ``--seeds`` seeds (window place, filler place and noise differ).

Run: ``python benchmarks/exp_dupniq_fig3.py [--seeds 5]``; writes
docs/figures/dupniq_fig3_its.png and dupniq_fig3_cs.png, prints the table and a RESULT line.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bookdup.features import BookFeatures, extract_features
from bookdup.model import Book
from bookdup.verify import verify_pair
from generator.noise import add_noise
from generator.real_variants import strip_gutenberg

REPO = Path(__file__).resolve().parents[1]
GUTENBERG = (REPO / ".." / "shared" / "data" / "gutenberg").resolve()
FIGURES = REPO / "docs" / "figures"
LINES_PER_PAGE = 40

#: (scenario, reference book X, filler book) — different authors / same author (Carroll).
SCENARIOS: tuple[tuple[str, str, str], ...] = (
    ("different-author", "alice-en-pg11", "scarletletter-en-pg33"),
    ("same-author", "alice-en-pg11", "lookingglass-en-pg12"),
)
OVERLAPS = (0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
NOISES = (0.0, 0.01, 0.02, 0.05, 0.10)


def read_lines(book_id: str, root: Path = GUTENBERG) -> list[str]:
    """Lines of a Gutenberg book's text, PG header/footer stripped."""
    raw = (root / f"{book_id}.txt").read_text(encoding="utf-8")
    return strip_gutenberg(raw).split("\n")


def lines_to_pages(lines: Sequence[str]) -> list[str]:
    """Pseudo-pages of 40 lines, as the plain-text reader makes them."""
    return ["\n".join(lines[i : i + LINES_PER_PAGE]) for i in range(0, len(lines), LINES_PER_PAGE)]


def features_of(book_id: str, pages: list[str]) -> BookFeatures:
    """Core features of one (synthetic) book."""
    return extract_features(Book(id=book_id, pages=pages))


def synthetic_partial(
    x: Sequence[str], filler: Sequence[str], overlap: float, rng: np.random.Generator
) -> list[str]:
    """Y of |X| lines: filler, a window of ``overlap`` (0–1) of X's lines, more filler."""
    n = len(x)
    keep = round(n * overlap)
    start = int(rng.integers(0, n - keep + 1))
    window = list(x[start : start + keep])
    rest = n - keep
    if rest == 0:
        return window
    if len(filler) < rest:
        raise ValueError(f"filler has {len(filler)} lines, {rest} needed")
    f0 = int(rng.integers(0, len(filler) - rest + 1))
    fill = list(filler[f0 : f0 + rest])
    cut = int(rng.integers(0, rest + 1))
    return fill[:cut] + window + fill[cut:]


@dataclass(frozen=True)
class Point:
    """Mean scores of one (scenario, overlap, noise) cell over the seeds."""

    scenario: str
    overlap: int
    noise: float
    cs: float
    its: float
    lcs: float


def run(
    seeds: int = 5,
    overlaps: Sequence[int] = OVERLAPS,
    noises: Sequence[float] = NOISES,
    scenarios: Sequence[tuple[str, str, str]] = SCENARIOS,
) -> list[Point]:
    """Every cell of the experiment, averaged over ``seeds`` runs."""
    points: list[Point] = []
    for name, ref_id, filler_id in scenarios:
        x_lines = read_lines(ref_id)
        filler = read_lines(filler_id)
        while len(filler) < len(x_lines):  # a short filler book is repeated, never X's text
            filler = filler + filler
        fx = features_of(ref_id, lines_to_pages(x_lines))
        for overlap in overlaps:
            for noise in noises:
                cs_s, its_s, lcs_s = [], [], []
                for seed in range(seeds):
                    rng = np.random.default_rng([seed, overlap, round(noise * 1000)])
                    y_pages = lines_to_pages(synthetic_partial(x_lines, filler, overlap / 100, rng))
                    y_pages = add_noise(y_pages, noise, rng)
                    fy = features_of(f"{ref_id}-y", y_pages)
                    v = verify_pair(fx, fy, threshold=0.0)
                    assert v is not None  # threshold 0 never prunes
                    cs_s.append(v.cs)
                    its_s.append(v.its)
                    lcs_s.append(v.lcs)
                points.append(
                    Point(
                        name,
                        overlap,
                        noise,
                        float(np.mean(cs_s)),
                        float(np.mean(its_s)),
                        float(np.mean(lcs_s)),
                    )
                )
    return points


def table(points: Sequence[Point]) -> str:
    """Markdown table: one row per (scenario, overlap), its / cs per noise level."""
    noises = sorted({p.noise for p in points})
    head = " | ".join(f"its@{n:.0%} | cs@{n:.0%}" for n in noises)
    lines = [f"| scenario | overlap % | {head} |", "| --- | ---: |" + " ---: |" * 2 * len(noises)]
    cells: dict[tuple[str, int], dict[float, Point]] = {}
    for p in points:
        cells.setdefault((p.scenario, p.overlap), {})[p.noise] = p
    for (scenario, overlap), row in cells.items():
        vals = " | ".join(f"{row[n].its:.3f} | {row[n].cs:.3f}" for n in noises)
        lines.append(f"| {scenario} | {overlap} | {vals} |")
    return "\n".join(lines)


def plot(points: Sequence[Point], out_dir: Path = FIGURES) -> list[Path]:
    """One PNG per score, a panel per scenario, a line per noise level (as the paper's Fig. 3)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    scenarios = list(dict.fromkeys(p.scenario for p in points))
    noises = sorted({p.noise for p in points})
    paths = []
    for score in ("its", "cs"):
        fig, axes = plt.subplots(1, len(scenarios), figsize=(5 * len(scenarios), 4), sharey=True)
        axes = np.atleast_1d(axes)
        for ax, scenario in zip(axes, scenarios, strict=True):
            for noise in noises:
                sel = sorted(
                    (p for p in points if p.scenario == scenario and p.noise == noise),
                    key=lambda p: p.overlap,
                )
                ax.plot(
                    [p.overlap for p in sel],
                    [getattr(p, score) for p in sel],
                    marker="o",
                    label=f"{noise:.0%} noise",
                )
            ax.set_title(f"DUPNIQ-{score}, {scenario}")
            ax.set_xlabel("overlap %")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel(f"DUPNIQ-{score}")
        axes[0].set_ylim(0, 1.02)
        axes[-1].legend()
        fig.tight_layout()
        path = out_dir / f"dupniq_fig3_{score}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> None:
    """Run, print the table and the RESULT line, write the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    points = run(seeds=args.seeds)
    print(table(points))
    if not args.no_plot:
        for path in plot(points):
            print(f"wrote {path.relative_to(REPO)}")

    def at(overlap: int, noise: float, score: str, scenario: str = "different-author") -> float:
        p = next(
            p for p in points if (p.scenario, p.overlap, p.noise) == (scenario, overlap, noise)
        )
        return float(getattr(p, score))

    print(f"elapsed {time.monotonic() - t0:.1f}s")
    print(
        "RESULT "
        f"its_at_100pct_0noise={at(100, 0.0, 'its'):.3f} "
        f"its_at_50pct_0noise={at(50, 0.0, 'its'):.3f} "
        f"its_at_50pct_5noise={at(50, 0.05, 'its'):.3f} "
        f"its_at_50pct_10noise={at(50, 0.10, 'its'):.3f} "
        f"cs_at_50pct_0noise={at(50, 0.0, 'cs'):.3f} "
        f"cs_at_50pct_5noise={at(50, 0.05, 'cs'):.3f} "
        f"cs_at_50pct_10noise={at(50, 0.10, 'cs'):.3f} "
        f"its_at_0pct_0noise={at(0, 0.0, 'its'):.3f} "
        f"its_at_0pct_0noise_same_author={at(0, 0.0, 'its', 'same-author'):.3f}"
    )


if __name__ == "__main__":
    main()
