"""An open end read again beside the shared text (``bookdup.endread``): a part's garbled end
finds its words there, a book's own end does not."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bookdup.endread import end_rereads, reread_end
from bookdup.uniquewords import UniqueWords, hash_words


@dataclass
class Book:
    unique: UniqueWords


def _book(words: list[str], with_words: bool = True) -> Book:
    pages = np.arange(len(words), dtype=np.int32) // 30
    return Book(UniqueWords(list(words) if with_words else None, hash_words(words), pages))


_RNG = np.random.default_rng(11)
_WORDS = list(dict.fromkeys("".join(_RNG.choice(list("abcdefghij"), 8)) for _ in range(2000)))
VOLUME = _WORDS[:200]  # its last 20 words are the end the other book may lack


def _garbled(word: str) -> str:
    return word[:3] + "z" + word[4:]  # one replacement


def _items() -> tuple[np.ndarray, np.ndarray]:
    """The volume's first 180 words aligned, at positions 50-229 of the other book."""
    return np.arange(180), np.arange(180) + 50


def test_a_part_s_garbled_end_is_found_beside_the_shared_text() -> None:
    edition = _WORDS[1000:1050] + VOLUME[:180] + [_garbled(w) for w in VOLUME[180:]]
    edition += _WORDS[1100:1200]
    assert reread_end(_book(VOLUME), _book(edition), _items(), (180, 200)) == 20
    # without the words only the exact matches count: none survived
    assert reread_end(_book(VOLUME, False), _book(edition), _items(), (180, 200)) == 0


def test_a_book_s_own_end_finds_nothing_there() -> None:
    anthology = _WORDS[1000:1050] + VOLUME[:180] + _WORDS[1100:1200]
    assert reread_end(_book(VOLUME), _book(anthology), _items(), (180, 200)) == 0


def test_a_head_is_read_before_the_first_aligned_word_and_either_book_may_hold_it() -> None:
    volume = VOLUME[::-1]  # the end the other book may lack is now its first 20 words
    edition = _WORDS[1000:1050] + [_garbled(w) for w in volume[:20]] + volume[20:]
    x, y = _book(volume), _book(edition)
    items = (np.arange(20, 200), np.arange(20, 200) + 50)
    assert reread_end(x, y, items, (0, 20)) == 20
    reread = end_rereads(y, x, (items[1], items[0]))
    assert reread(False, 0, 20) == 20  # the same end, of y
    far = _WORDS[1000:1050] + _WORDS[1500:1600] + volume[20:]  # the end's text far away
    assert reread_end(x, _book(far), (items[0], items[1] + 100), (0, 20)) == 0
