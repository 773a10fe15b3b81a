"""The relation of book x to book y as the core found it, typed: what `bookdup compare` prints,
the dedup job stores and the read side shows, built once (``bookdup.compare``) and turned into
JSON in one place, so that flipping a pair or storing it cannot drift from the printed form.

Keys follow the papers: ``x``, ``y`` (|X|, |Y| unique words), ``shared``, ``lcs``, ``cs``,
``its`` (DUPNIQ-cs/-its, or TRANS-cs/-its when a dictionary was used).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from bookdup.orderstat import OrderEvidence
from bookdup.pairs import orient
from bookdup.verify import UniqueWordScores

__all__ = ["RelationResult"]

_OTHER_SIDE = {"x": "y", "y": "x"}


@dataclass(frozen=True)
class RelationResult(UniqueWordScores):
    """The relation of x to y with its evidence; floats rounded as printed and stored.

    ``signals`` is the page signals' JSON form (``RelationSignals.to_dict``, rounded): flipping
    works on those rounded values, as the printed result always did. ``pruned``: rejected below
    a floor, scores reported as 0 and no side named as translated (``translated`` not printed).
    """

    order: OrderEvidence | None
    #: "TRANS" when a dictionary translated x (or y), else "DUPNIQ"
    scores: str
    relation: str
    confidence: float
    #: "x_in_y" / "y_in_x" for the containments (``bookdup.classify.Relation``), else None
    direction: str | None
    confidences: dict[str, float]
    signals: dict[str, Any]
    languages: tuple[str, str]
    #: the lexicon's "source-target", None without one
    dictionary: str | None
    #: which book the lexicon translated ("x" or "y"), None without one
    translated: str | None = None
    pruned: bool = False

    def flipped(self) -> RelationResult:
        """This result worded for (y, x): sizes, coverages, pages, direction and the translated
        side swapped (flipped twice, the same result)."""
        order = self.order
        if order is not None and order.window is not None:
            side, start, end = order.window
            order = replace(order, window=(_OTHER_SIDE[side], start, end))
        return replace(
            self,
            x=self.y,
            y=self.x,
            order=order,
            direction=orient(self.direction, "compared", flip=True),
            signals=_flipped_signals(self.signals),
            languages=(self.languages[1], self.languages[0]),
            translated=_OTHER_SIDE.get(self.translated or "", self.translated),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: what ``bookdup compare --json`` prints, key for key."""
        out: dict[str, Any] = {
            "x": self.x,
            "y": self.y,
            "shared": self.shared,
            "lcs": self.lcs,
            "cs": self.cs,
            "its": self.its,
            "order": self.order.to_dict() if self.order is not None else None,
            "scores": self.scores,
            "relation": self.relation,
            "confidence": self.confidence,
            "direction": self.direction,
            "confidences": self.confidences,
            "signals": self.signals,
            "languages": list(self.languages),
            "dictionary": self.dictionary,
        }
        if not self.pruned:
            out["translated"] = self.translated
        out["pruned"] = self.pruned
        return out

    def to_doc(self, a: str, b: str) -> dict[str, Any]:
        """The relations-index document of the pair (a, b) this result compared as (x, y),
        ``a`` < ``b``: the direction in the index's words (``a_in_b`` / ``b_in_a``); the
        writer adds its run."""
        return {
            "a": a,
            "b": b,
            "relation": self.relation,
            "direction": orient(self.direction, "stored"),
            "confidence": round(float(self.confidence), 4),
            "translated": self.languages[0] != self.languages[1],
            "languages": list(self.languages),
            "x": int(self.x),
            "y": int(self.y),
            "shared": int(self.shared),
            "lcs": int(self.lcs),
            "cs": round(float(self.cs), 4),
            "its": round(float(self.its), 4),
            "signals": self.signals,
            "evidence": {},  # the mapping's slot for more evidence; none is stored today
        }


def _flipped_signals(signals: dict[str, Any]) -> dict[str, Any]:
    """Page signals of (x, y) worded for (y, x): ``_x`` / ``_y`` pairs swapped, the page
    mapping inverted (from the rounded values, as printed)."""
    out = dict(signals)
    for key in list(out):
        if key.endswith("_x") and key[:-2] + "_y" in out:
            out[key], out[key[:-2] + "_y"] = out[key[:-2] + "_y"], out[key]
    if "delta_pages" in out:
        out["delta_pages"] = -out["delta_pages"]
    if out.get("slope"):
        slope, offset = out["slope"], out.get("offset", 0.0)
        out["slope"], out["offset"] = round(1 / slope, 4), round(-offset / slope, 4)
    if out.get("text_ratio"):
        out["text_ratio"] = round(1 / out["text_ratio"], 4)
    return out
