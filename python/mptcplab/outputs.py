"""Writing an output file the user named (a report, an export, a design, a store): its folder is
made when missing, and a place that cannot be written is a :class:`UserError` naming the file
and the reason, not a traceback."""

from __future__ import annotations

from collections.abc import Iterator
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


def check_writable(path: str | Path, what: str) -> Path:
    """Refuse, before a long run, an output the run could not write at its end: the folder is
    made and the file opened for appending (and removed again if it did not exist)."""
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
