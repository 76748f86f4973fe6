"""The one exception type that reaches the user as a message instead of a traceback."""

from __future__ import annotations

from collections.abc import Sequence

SHOWN_PROBLEMS = 10
"""Problems of one document listed in full; beyond, a count (a generated file may repeat one
mistake in every entry)."""


class UserError(Exception):
    """Bad input from the user: a file, a field or an option.

    The message names where the problem is (file, line when known, field) and what was
    expected. Problems found together (every invalid field of one file) travel as ``also``, so
    the user fixes them in one pass. The CLI prints each and exits with code 2.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
        also: tuple[UserError, ...] = (),
    ) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.detail = message
        self.also = also
        super().__init__("\n".join(self.problems()))

    @classmethod
    def several(cls, problems: Sequence[UserError], total: int | None = None) -> UserError:
        """One error carrying ``problems`` (at least one), the first leading; past
        :data:`SHOWN_PROBLEMS` the last one shown says how many more there are. ``total``: how
        many problems there are when only the first ones were made into errors (locating each
        in its file takes a scan of the text: thousands of them took minutes)."""
        shown = list(problems[:SHOWN_PROBLEMS])
        count = len(problems) if total is None else total
        if count > SHOWN_PROBLEMS:
            last, more = shown[-1], count - SHOWN_PROBLEMS
            detail = f"{last.detail} (and {more} more problem{'s' if more > 1 else ''})"
            shown[-1] = cls(detail, file=last.file, line=last.line, field=last.field)
        first = shown[0]
        return cls(
            first.detail, file=first.file, line=first.line, field=first.field, also=tuple(shown[1:])
        )

    def problems(self) -> list[str]:
        """This problem and the others found with it, one located message each."""
        return [self._format(), *(p._format() for p in self.also)]

    def _format(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line:
                where += f":{self.line}"
        if self.field:
            where = f"{where}: {self.field}" if where else self.field
        return f"{where}: {self.detail}" if where else self.detail
