"""Stop-word language identification on the real Gutenberg books, clean and with OCR noise."""

import json
import random
from pathlib import Path

import pytest

from bookdup.langid import SUPPORTED_LANGUAGES, detect_language, detect_language_counts
from bookdup.text import tokenize

GUTENBERG = (Path(__file__).parents[2] / "../shared/data/gutenberg").resolve()
needs_corpus = pytest.mark.skipif(not GUTENBERG.is_dir(), reason="Gutenberg corpus absent")


def _manifest() -> list[dict]:
    with open(GUTENBERG / "manifest.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _noisy(text: str, rate: float, rng: random.Random) -> str:
    """Uniform character insert / delete / replace, each with probability rate / 3."""
    letters = "abcdefghijklmnopqrstuvwxyzäéèàüöñ"
    out = []
    for ch in text:
        x = rng.random()
        if x < rate / 3:
            continue
        if x < 2 * rate / 3:
            out.append(rng.choice(letters))
        elif x < rate:
            out.extend((ch, rng.choice(letters)))
        else:
            out.append(ch)
    return "".join(out)


@needs_corpus
def test_accuracy_on_gutenberg():
    books = _manifest()
    assert len(books) == 80
    wrong = []
    for m in books:
        words = tokenize((GUTENBERG / m["file"]).read_text(encoding="utf-8"))
        lang, conf = detect_language(words)
        if lang != m["language"]:
            wrong.append((m["id"], m["language"], lang))
        else:
            assert conf > 0.3, (m["id"], conf)  # clear margin over the runner-up
    accuracy = 1 - len(wrong) / len(books)
    assert accuracy >= 0.95, wrong


@needs_corpus
@pytest.mark.parametrize(
    "book_id",
    [
        "alice-en-pg11",
        "alice-de-zimmermann-pg19778",
        "bovary-fr-pg14155",
        "alice-it-rossetti-pg28371",
        "lazarillo-es-pg320",
        "perfecta-es-pg15725",
    ],
)
def test_robust_to_ocr_noise(book_id):
    m = next(b for b in _manifest() if b["id"] == book_id)
    text = (GUTENBERG / m["file"]).read_text(encoding="utf-8")
    body = text[len(text) // 3 : len(text) // 3 + 60_000]  # ~10K words past the header
    lang, conf = detect_language(tokenize(_noisy(body, 0.10, random.Random(1))))
    assert lang == m["language"] and conf > 0.2


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("It was the best of times, it was the worst of times, and all of us were there.", "en"),
        ("Es war einmal ein König, der hatte eine Tochter, die war sehr schön und klug.", "de"),
        ("Il était une fois un roi qui avait une fille, et elle était très belle.", "fr"),
        ("Había una vez un rey que tenía una hija muy hermosa, y todos la querían.", "es"),
        ("C'era una volta un re che aveva una figlia molto bella, e tutti la amavano.", "it"),
        ("Era uma vez um rei que tinha uma filha muito bonita, e todos a amavam.", "pt"),
        ("Er was eens een koning die een dochter had, en zij was zeer mooi en wijs.", "nl"),
        ("Жил был царь, и у него была дочь, и она была очень красива, и все её любили.", "ru"),
    ],
)
def test_short_sentences(text, lang):
    assert detect_language(tokenize(text))[0] == lang


def test_too_little_evidence_is_undetermined():
    assert detect_language([]) == ("und", 0.0)
    assert detect_language(["the", "cat"]) == ("und", 0.0)
    # plenty of words but no stop words: a word list, numbers spelled out in Greek, etc.
    assert detect_language(tokenize("αλφα βητα γαμμα δελτα εψιλον ζητα ητα θητα " * 50)) == (
        "und",
        0.0,
    )


def test_counts_interface_and_languages():
    assert set(SUPPORTED_LANGUAGES) >= {"en", "de", "fr", "es", "it", "pt", "nl", "ru"}
    lang, conf = detect_language_counts({"the": 50, "and": 30, "of": 20, "die": 3})
    assert lang == "en" and 0.8 < conf <= 1.0
