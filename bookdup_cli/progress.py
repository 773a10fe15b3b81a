"""A progress line for long jobs (count, rate, ETA): in place on a terminal, else every 10 s."""

from __future__ import annotations

import sys
import time
from types import TracebackType


class Progress:
    """Context manager; call ``update(done, total=None)`` as work finishes."""

    def __init__(self, label: str, total: int | None, unit: str = "items") -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.done = 0
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._tty = sys.stderr.isatty()

    def __enter__(self) -> Progress:
        return self

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = time.monotonic()
        if now - self._last_draw >= (0.2 if self._tty else 10.0):
            self._draw(now)

    def line(self, now: float) -> str:
        elapsed = max(now - self._start, 1e-9)
        rate = self.done / elapsed
        text = f"{self.label}: {self.done}"
        if self.total:
            text += f"/{self.total} ({100 * self.done / self.total:.0f}%)"
            if rate > 0 and self.done < self.total:
                eta = (self.total - self.done) / rate
                text += f", ETA {int(eta // 60)}m{int(eta % 60):02d}s"
        return text + f", {rate:.1f} {self.unit}/s"

    def _draw(self, now: float) -> None:
        self._last_draw = now
        if self._tty:
            sys.stderr.write("\r\033[K" + self.line(now))
        else:
            sys.stderr.write(self.line(now) + "\n")
        sys.stderr.flush()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._draw(time.monotonic())
        if self._tty:
            sys.stderr.write("\n")
