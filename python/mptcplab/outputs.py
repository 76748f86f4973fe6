"""Writing an output file the user named (a report, an export, a design, a store): its folder is
made when missing, and a place that cannot be written is a :class:`UserError` naming the file
and the reason, not a traceback."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from mptcplab.errors import UserError


def _cannot_write(out: Path, what: str, exc: OSError) -> UserError:
    return UserError(f"cannot write {what}: {exc.strerror or exc}", file=str(out))


def make_folder(path: str | Path, what: str) -> Path:
    """Make the folder that will hold ``path`` (a file written later, or created by SQLite)."""
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        # mkdir says only "File exists" (or "Not a directory") when a file stands in the way.
        blocking = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
        if blocking is not None:
            raise UserError(
                f"cannot write {what}: {blocking} is a file, not a folder", file=str(out)
            ) from None
        raise _cannot_write(out, what, exc) from None
    return out


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return a.resolve() == b.resolve()


def check_writable(path: str | Path, what: str, *, reads: Iterable[str | Path] = ()) -> Path:
    """Refuse, before a long run, an output the run could not write at its end: the folder is
    made and the file opened for appending (and removed again if it did not exist). An output
    that is one of the files the command ``reads`` (its store, campaign or scenario) is refused
    before anything is written: writing it would destroy the input."""
    for source in reads:
        if _same_file(Path(path), Path(source)):
            raise UserError(
                f"cannot write {what} there: it is {source}, which this command reads; "
                "give another path",
                file=str(path),
            )
    out = make_folder(path, what)
    existed = out.exists()
    try:
        with out.open("a"):
            pass
    except OSError as exc:
        raise _cannot_write(out, what, exc) from None
    if not existed:
        out.unlink(missing_ok=True)
    return out


@contextmanager
def writing(path: str | Path, what: str) -> Iterator[Path]:
    """``with writing(out, "the report") as out: out.write_text(...)``: the body writes ``out``
    (its parent folder exists by then); an :class:`OSError` becomes a :class:`UserError`."""
    out = make_folder(path, what)
    try:
        yield out
    except OSError as exc:
        raise _cannot_write(out, what, exc) from None
