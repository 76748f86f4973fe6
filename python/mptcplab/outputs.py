"""Writing an output file the user named (a report, an export, a design, a store): its folder is
made when missing, and a place that cannot be written is a :class:`UserError` naming the file
and the reason, not a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mptcplab.errors import UserError


@contextmanager
def writing(path: str | Path, what: str) -> Iterator[Path]:
    """``with writing(out, "the report") as out: out.write_text(...)``: the body writes ``out``
    (its parent folder exists by then); an :class:`OSError` becomes a :class:`UserError`."""
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        yield out
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UserError(f"cannot write {what}: {reason}", file=str(out)) from None
