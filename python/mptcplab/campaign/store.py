"""The campaign store: one SQLite file per campaign, one committed row per finished run.

Tables (``FORMAT_VERSION`` changes whenever one changes meaning; older stores are refused with a
message rather than misread):

- ``meta``: key/value pairs — ``format_version``, ``campaign`` (the campaign's name),
  ``plan_campaign_path`` and ``plan_campaign_text`` (the campaign that made the current plan).
- ``provenance``: one row per invocation of the runner — mptcplab version, git revision, backend
  and its version, host, executor, start and end times, the campaign file's path and full text.
- ``designs``: each design's kind and unit-cube points, for the design-quality table.
- ``tasks``: the current plan — one row per (design, point, variant, replication, role); a
  reference run shared by several variants appears once per variant but runs once.
- ``runs``: one row per run key (hash of scenario, seed, backend name and version) with its
  status (``done`` or ``failed``), metrics, compressed scenario and report, error text, wall
  time and the descriptive columns of the task that first produced it.

Every finished run is written in its own transaction; the database runs in WAL mode with full
synchronisation, so killing the runner loses only the runs that were still executing.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

from mptcplab.errors import UserError
from mptcplab.outputs import make_folder

#: The columns the runs table (``analysis.tables.to_pandas``) gives every run beside its
#: factors, levels and metrics.
RUN_COLUMNS = (
    "run_key",
    "role",
    "design",
    "point",
    "replication",
    "seed",
    "path",
    "status",
    "error",
    "wall_s",
    "attempts",
    "variant",
)

FORMAT_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS provenance (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    mptcplab_version TEXT NOT NULL,
    git_revision     TEXT,
    backend          TEXT NOT NULL,
    backend_version  TEXT NOT NULL,
    host             TEXT NOT NULL,
    executor         TEXT NOT NULL,
    jobs             INTEGER,
    started_at       TEXT NOT NULL,
    ended_at         TEXT,
    planned_runs     INTEGER NOT NULL,
    completed_runs   INTEGER NOT NULL DEFAULT 0,
    failed_runs      INTEGER NOT NULL DEFAULT 0,
    campaign_path    TEXT NOT NULL,
    campaign_text    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS designs (
    design       INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL,
    factor_names TEXT NOT NULL,
    unit_points  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tasks (
    task_id        INTEGER PRIMARY KEY,
    run_key        TEXT NOT NULL,
    role           TEXT NOT NULL,
    design         INTEGER NOT NULL,
    point          INTEGER NOT NULL,
    variant        TEXT NOT NULL,
    factors        TEXT NOT NULL,
    replication    INTEGER NOT NULL,
    seed           INTEGER NOT NULL,
    path           INTEGER,
    reference_keys TEXT
);
CREATE INDEX IF NOT EXISTS tasks_run_key ON tasks(run_key);
CREATE TABLE IF NOT EXISTS runs (
    run_key         TEXT PRIMARY KEY,
    role            TEXT NOT NULL,
    design          INTEGER NOT NULL,
    point           INTEGER NOT NULL,
    variant         TEXT NOT NULL,
    factors         TEXT NOT NULL,
    replication     INTEGER NOT NULL,
    seed            INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    metrics         TEXT,
    report          BLOB,
    scenario        BLOB NOT NULL,
    error           TEXT,
    backend         TEXT NOT NULL,
    backend_version TEXT NOT NULL,
    wall_s          REAL,
    attempts        INTEGER NOT NULL DEFAULT 1,
    provenance_id   INTEGER,
    finished_at     TEXT NOT NULL
);
"""


_SQLITE_HEADER = b"SQLite format 3\x00"

# The JSON columns of a task row (see :meth:`Store.task_rows`) and the type each holds.
_JSON_FIELDS: dict[str, type] = {
    "variant": dict,
    "factors": dict,
    "metrics": dict,
    "reference_keys": list,
}


@cache
def _schema_columns() -> dict[str, list[str]]:
    """Each table of ``_SCHEMA`` and its columns, as SQLite itself reads the schema."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(_SCHEMA)
        names = [
            str(r[0])
            for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not str(r[0]).startswith("sqlite_")
        ]
        return {n: [str(c[1]) for c in db.execute(f"PRAGMA table_info({n})")] for n in names}
    finally:
        db.close()


_SET_META = (
    "INSERT INTO meta(key, value) VALUES (?, ?) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
)


#: SQLite's names for a file whose pages are not what they should be.
_DAMAGED = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


def store_error(path: Path, exc: sqlite3.DatabaseError, *, writing: bool) -> UserError:
    """What SQLite's ``exc`` on the store at ``path`` means to the user."""
    if getattr(exc, "sqlite_errorname", None) in _DAMAGED:
        return UserError(
            f"damaged store ({exc}); SQLite can copy what is left of it into a new file: "
            f'sqlite3 {shlex.quote(str(path))} ".recover" | sqlite3 recovered.sqlite',
            file=str(path),
        )
    if writing:
        # Locked by another process for longer than the timeout, a full disk, an I/O error.
        return UserError(
            f"cannot write the store ({exc}); every run committed before is kept",
            file=str(path),
        )
    return UserError(f"cannot read the store ({exc})", file=str(path))


# Errors of this code rather than of the file: their traceback is what a report needs.
_BUGS = (sqlite3.ProgrammingError, sqlite3.IntegrityError)


class _Connection(sqlite3.Connection):
    """The store's connection: every statement, and every row a cursor fetches afterwards (a
    damaged page is met at whichever row lies on it), turns an error of SQLite's into a
    UserError naming the store, so that no reader or writer of a damaged store ends in a
    traceback."""

    store_path = Path()
    writing = False  # in a write transaction (see Store._transaction)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return self.cursor(_Cursor).execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        return self.cursor(_Cursor).executemany(sql, parameters)

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        return self.cursor(_Cursor).executescript(script)

    def failed(self, exc: sqlite3.DatabaseError) -> UserError:
        return store_error(self.store_path, exc, writing=self.writing)


class _Cursor(sqlite3.Cursor):
    connection: _Connection

    def _guarded(self, call: Callable[..., Any], *args: Any) -> Any:
        try:
            return call(*args)
        except _BUGS:
            raise
        except sqlite3.DatabaseError as exc:
            raise self.connection.failed(exc) from None

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        return self._guarded(super().execute, sql, parameters)  # type: ignore[no-any-return]

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> _Cursor:
        return self._guarded(super().executemany, sql, parameters)  # type: ignore[no-any-return]

    def executescript(self, script: str, /) -> _Cursor:
        return self._guarded(super().executescript, script)  # type: ignore[no-any-return]

    def __next__(self) -> Any:
        return self._guarded(super().__next__)

    def fetchone(self) -> Any:
        return self._guarded(super().fetchone)

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        return self._guarded(super().fetchmany, size)  # type: ignore[no-any-return]

    def fetchall(self) -> list[Any]:
        return self._guarded(super().fetchall)  # type: ignore[no-any-return]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def compress_json(value: Any) -> bytes:
    return zlib.compress(json.dumps(value, separators=(",", ":")).encode(), 6)


def decompress_json(blob: bytes | None) -> Any:
    return None if blob is None else json.loads(zlib.decompress(blob))


@dataclass(frozen=True)
class TaskRow:
    """One planned run of the campaign (see module docstring, ``tasks``)."""

    run_key: str
    role: str  # "main" or "reference"
    design: int
    point: int
    variant: Mapping[str, Any]
    factors: Mapping[str, Any]
    replication: int
    seed: int
    path: int | None = None
    reference_keys: Sequence[str] | None = None


def _task_columns(task: TaskRow) -> tuple[Any, ...]:
    """The columns ``tasks`` and ``runs`` share: run_key, role, design, point, variant,
    factors, replication, seed."""
    return (
        task.run_key,
        task.role,
        task.design,
        task.point,
        json.dumps(dict(task.variant)),
        json.dumps(dict(task.factors)),
        task.replication,
        task.seed,
    )


@dataclass(frozen=True)
class RunOutcome:
    """What an executed task gives back: either a report and metrics, or an error text."""

    run_key: str
    ok: bool
    metrics: Mapping[str, float] | None
    report: Mapping[str, Any] | None
    error: str | None
    wall_s: float


class Store:
    """A campaign's SQLite store. Use as a context manager or call :meth:`close`.

    Opened for reading (the default), the file is checked to be a campaign store of this
    format with every table and column the code reads, and is never written: status, report
    and export must not change what they read. ``create=True`` makes the store, or opens an
    existing one for writing; any other file there is refused rather than written into.
    """

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = Path(path)
        new = self._make_file() if create else self._check_file()
        # A store this process cannot write (an archive in a read-only folder) is read through a
        # read-only connection, or as an immutable file where SQLite cannot read it that way.
        self._read_only = not create and not (
            os.access(self.path.parent, os.W_OK) and os.access(self.path, os.W_OK)
        )
        self._immutable = self._read_only and not self._readable_with_its_log()
        try:
            # Checked through a read-only connection: neither a reading command nor `run -o`
            # writes into a file before it is known to be a campaign store.
            self._db = sqlite3.connect(self._uri(), uri=True, timeout=30.0, isolation_level=None)
            if not new:
                new = self._check_schema(create)
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorname", None) in _DAMAGED:
                raise store_error(self.path, exc, writing=False) from None
            self._refuse(f"not a campaign store ({exc})", create)
        finally:
            with suppress(AttributeError):
                self._db.close()
        # A checked store is read through a read-write connection all the same: a read-only one
        # leaves the -wal and -shm files behind, which the last read-write connection removes.
        # Reading writes nothing through it.
        try:
            self._db = sqlite3.connect(
                self._uri() if self._read_only else self.path,
                uri=self._read_only,
                timeout=30.0,
                isolation_level=None,
                factory=_Connection,
            )
        except sqlite3.DatabaseError as exc:
            action = "write" if create else "open"
            raise UserError(f"cannot {action} the store ({exc})", file=str(self.path)) from None
        self._db.store_path = self.path
        self._db.writing = create
        try:
            if create:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
            if new:
                # One transaction: a file is either empty or a complete store of this format.
                self._db.executescript(
                    f"BEGIN IMMEDIATE;\n{_SCHEMA}\nINSERT OR IGNORE INTO meta(key, value) "
                    f"VALUES ('format_version', '{FORMAT_VERSION}');\nCOMMIT;"
                )
        except UserError:
            self._db.close()
            raise
        self._db.writing = False

    def _uri(self) -> str:
        immutable = "&immutable=1" if self._immutable else ""
        return f"{self.path.absolute().as_uri()}?mode=ro{immutable}"

    def _readable_with_its_log(self) -> bool:
        """Whether SQLite reads this store, which this process cannot write, read-only with its
        write-ahead log: the log holds every run committed since the last checkpoint, which is
        most of them after a killed campaign or while one runs. It can where the log's -shm
        file is there. Otherwise the store can only be read as an immutable file, which ignores
        the log: refused when the log holds anything, rather than read without those runs."""
        try:
            db = sqlite3.connect(f"{self.path.absolute().as_uri()}?mode=ro", uri=True)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                db.close()
            return True
        except sqlite3.Error:
            pass
        log = self.path.with_name(self.path.name + "-wal")
        if log.exists() and log.stat().st_size > 0:
            raise UserError(
                f"runs are still in its write-ahead log {log.name}, which this process cannot "
                "read without writing beside it; copy the store's folder somewhere writable, or "
                "open it once with write access",
                file=str(self.path),
            )
        return False

    def _refuse(self, reason: str, create: bool) -> NoReturn:
        with suppress(AttributeError):
            self._db.close()
        hint = "; choose another output path" if create else ""
        raise UserError(reason + hint, file=str(self.path)) from None

    def _check_file(self) -> bool:
        """Refuse what cannot be a store before SQLite sees it (SQLite reads an empty or
        missing file as an empty database)."""
        if self.path.is_dir():
            inside = self.path / "store.sqlite"
            if inside.is_file():  # the campaign's results folder, given for its store
                raise UserError(f"{self.path} is a folder; its store is {inside}", field="STORE")
            raise UserError(
                f"{self.path} is a directory, not a campaign store (the .sqlite file "
                "`mptcplab run` writes)",
                field="STORE",
            )
        if not self.path.exists():
            raise UserError(f"no store at {self.path}", field="STORE")
        if not self.path.is_file():
            self._refuse("not a campaign store (not a regular file)", False)
        self._check_header(create=False)
        return False

    def _check_header(self, *, create: bool) -> bool:
        """True when the file is empty; refuses a file that is not an SQLite database."""
        try:
            with self.path.open("rb") as file:
                header = file.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise UserError(
                f"cannot read the store: {exc.strerror or exc}", file=str(self.path)
            ) from None
        if not header:
            if create:
                return True
            self._refuse("not a campaign store (empty file)", create)
        if header != _SQLITE_HEADER:
            self._refuse("not a campaign store (not an SQLite database)", create)
        return False

    def _make_file(self) -> bool:
        """Make the store's file unless it exists; True when the store is still to be made."""
        if self.path.is_dir():
            raise UserError("cannot create the store: it is a directory", file=str(self.path))
        if self.path.exists():
            if not self.path.is_file():
                self._refuse("cannot create the store: not a regular file", True)
            return self._check_header(create=True)
        make_folder(self.path, "the store")
        try:
            # Made here, not by SQLite, whose only complaint is "unable to open database file".
            with self.path.open("ab"):
                pass
        except OSError as exc:
            folder = self.path.parent
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                why = f"the folder {folder} is not writable ({exc.strerror})"
            elif exc.errno == errno.ENOENT:
                why = f"no new file can be made in {folder} ({exc.strerror})"
            else:
                why = str(exc.strerror or exc)
            raise UserError(f"cannot create the store: {why}", file=str(self.path)) from None
        return True

    def _check_schema(self, create: bool) -> bool:
        """Refuse a file that is not a complete campaign store of this format; True when it is
        an SQLite database without any table (a store whose creation was cut off)."""
        tables = {
            str(r[0])
            for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if not tables:
            if create:
                return True
            self._refuse("not a campaign store (an SQLite database without tables)", create)
        if "meta" not in tables:
            shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
            self._refuse(
                f"not a campaign store (an SQLite database without a meta table; its tables: "
                f"{shown})",
                create,
            )
        row = self._db.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone()
        if row is None:
            self._refuse("not a campaign store (no format version)", create)
        try:
            version = int(row[0])
        except (TypeError, ValueError):
            self._refuse(
                f"damaged store: meta format_version is {row[0]!r}, expected a whole number",
                create,
            )
        if version != FORMAT_VERSION:
            newer = "a newer" if version > FORMAT_VERSION else "an older"
            self._refuse(
                f"store format {version} comes from {newer} mptcplab; this one reads format "
                f"{FORMAT_VERSION}",
                create,
            )
        for table, expected in _schema_columns().items():
            if table not in tables:
                self._refuse(f"damaged store: no {table} table", create)
            present = {str(r[1]) for r in self._db.execute(f"PRAGMA table_info({table})")}
            missing = [c for c in expected if c not in present]
            if missing:
                self._refuse(
                    f"damaged store: table {table} lacks column {', '.join(missing)}", create
                )
        return False

    def _decoded(
        self, value: Any, what: str, owner: str, expected: type, *, compressed: bool = False
    ) -> Any:
        """A stored JSON value (zlib-compressed when ``compressed``) of the type the readers
        expect; a damaged one names its row instead of failing deep inside a report."""
        try:
            decoded = decompress_json(value) if compressed else json.loads(value)
        except (zlib.error, ValueError, TypeError) as exc:
            raise UserError(
                f"damaged store: the {what} of {owner} cannot be decoded ({exc})",
                file=str(self.path),
            ) from None
        if not isinstance(decoded, expected):
            raise UserError(
                f"damaged store: the {what} of {owner} is a {type(decoded).__name__}, expected "
                f"a {'JSON object' if expected is dict else 'JSON array'}",
                file=str(self.path),
            )
        return decoded

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        # Ctrl-C can land between BEGIN and the handler below, leaving a transaction open; the
        # runner's clean-up then writes again (provenance end) and must not fail on it. Nothing
        # of that write was committed, so it is rolled back as the handler would have done.
        db = self._db
        if isinstance(db, _Connection):
            db.writing = True
        try:
            if db.in_transaction:
                db.execute("ROLLBACK")
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except _BUGS:
            raise
        except sqlite3.DatabaseError as exc:  # a plain connection put in the store's place
            raise store_error(self.path, exc, writing=True) from None
        finally:
            if isinstance(db, _Connection):
                db.writing = False

    @contextmanager
    def sole_writer(self) -> Iterator[None]:
        """Hold the store for one `mptcplab run`: a second one on the same store is refused
        rather than run every task again beside it. An advisory lock on the file, not SQLite's
        (which covers one transaction): released when the process ends, however it ends."""
        import fcntl

        fd = os.open(self.path, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UserError(
                    "another `mptcplab run` is writing this store; wait for it to end, or "
                    "give this one another output",
                    file=str(self.path),
                ) from None
            yield
        finally:
            os.close(fd)

    # --- meta -------------------------------------------------------------------------------

    def _set_meta(self, key: str, value: str) -> None:
        with self._transaction() as db:
            db.execute(_SET_META, (key, value))

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def recompute_metrics(
        self,
        compute: Callable[[Mapping[str, Any], Mapping[str, Any]], Mapping[str, float]],
        fingerprint: str,
    ) -> int:
        """Recompute every finished run's metrics from its stored report and scenario with
        ``compute``, and record ``fingerprint`` as the definitions they now follow, in one
        transaction; returns how many runs it recomputed."""
        rows = self._db.execute(
            "SELECT run_key, report, scenario FROM runs "
            "WHERE status = 'done' AND report IS NOT NULL"
        ).fetchall()
        with self._transaction() as db:
            for key, report, scenario in rows:
                metrics = compute(decompress_json(report), decompress_json(scenario))
                db.execute(
                    "UPDATE runs SET metrics = ? WHERE run_key = ?",
                    (json.dumps(dict(metrics)), key),
                )
            db.execute(_SET_META, ("metrics_fingerprint", fingerprint))
        return len(rows)

    def claim(self, campaign_name: str) -> None:
        """Bind the store to a campaign; a store never mixes two campaigns' runs."""
        owner = self.meta("campaign")
        if owner is None:
            self._set_meta("campaign", campaign_name)
        elif owner != campaign_name:
            raise UserError(
                f"this store belongs to campaign '{owner}', not '{campaign_name}'; "
                "choose another output path",
                file=str(self.path),
            )

    def check_campaign(self, campaign_name: str, campaign_file: str | Path) -> None:
        """Refuse, when reading a store through its campaign's file, a store that another
        campaign wrote: its runs are not this campaign's (``run`` refuses it in :meth:`claim`)."""
        owner = self.meta("campaign")
        if owner is not None and owner != campaign_name:
            raise UserError(
                f"the store {self.path} belongs to campaign '{owner}', not '{campaign_name}'; "
                "give this campaign its own output path",
                file=str(campaign_file),
                field="output",
            )

    # --- plan -------------------------------------------------------------------------------

    def replace_plan(
        self,
        tasks: Iterable[TaskRow],
        designs: Iterable[tuple[int, str, Sequence[str], Sequence[Sequence[float]]]],
        campaign: tuple[str, str] | None = None,
    ) -> None:
        """Record the campaign's current plan (its designs and tasks) in one transaction, with
        the path and text of the campaign that made it (see :meth:`campaign_text`)."""
        with self._transaction() as db:
            db.execute("DELETE FROM tasks")
            db.execute("DELETE FROM designs")
            if campaign is not None:
                db.executemany(
                    _SET_META,
                    [("plan_campaign_path", campaign[0]), ("plan_campaign_text", campaign[1])],
                )
            db.executemany(
                "INSERT INTO designs(design, kind, factor_names, unit_points) VALUES (?,?,?,?)",
                [
                    (index, kind, json.dumps(list(names)), json.dumps([list(p) for p in points]))
                    for index, kind, names, points in designs
                ],
            )
            db.executemany(
                "INSERT INTO tasks(run_key, role, design, point, variant, factors, replication,"
                " seed, path, reference_keys) VALUES (?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        *_task_columns(t),
                        t.path,
                        None if t.reference_keys is None else json.dumps(list(t.reference_keys)),
                    )
                    for t in tasks
                ],
            )

    def designs(self) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT design, kind, factor_names, unit_points FROM designs ORDER BY design"
        ).fetchall()
        return [
            {
                "design": r[0],
                "kind": r[1],
                "factor_names": self._decoded(r[2], "factor names", f"design {r[0]}", list),
                "unit_points": self._decoded(r[3], "unit points", f"design {r[0]}", list),
            }
            for r in rows
        ]

    # --- runs -------------------------------------------------------------------------------

    def finished_keys(self) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT run_key FROM runs WHERE status = 'done'")}

    def run_keys(self) -> set[str]:
        """Every stored run's key, done or failed, in the plan or not."""
        return {r[0] for r in self._db.execute("SELECT run_key FROM runs")}

    def record(
        self,
        task: TaskRow,
        outcome: RunOutcome,
        *,
        scenario: Mapping[str, Any],
        backend: str,
        backend_version: str,
        provenance_id: int | None,
    ) -> None:
        """Commit one finished run. A run already ``done`` is never overwritten."""
        status = "done" if outcome.ok else "failed"
        with self._transaction() as db:
            db.execute(
                """
                INSERT INTO runs(run_key, role, design, point, variant, factors, replication,
                                 seed, status, metrics, report, scenario, error, backend,
                                 backend_version, wall_s, attempts, provenance_id, finished_at)
                VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,?,?)
                ON CONFLICT(run_key) DO UPDATE SET
                    status = excluded.status, metrics = excluded.metrics,
                    report = excluded.report, error = excluded.error,
                    wall_s = excluded.wall_s, attempts = runs.attempts + 1,
                    provenance_id = excluded.provenance_id,
                    finished_at = excluded.finished_at
                WHERE runs.status != 'done'
                """,
                (
                    *_task_columns(task),
                    status,
                    None if outcome.metrics is None else json.dumps(dict(outcome.metrics)),
                    None if outcome.report is None else compress_json(outcome.report),
                    compress_json(scenario),
                    outcome.error,
                    backend,
                    backend_version,
                    outcome.wall_s,
                    provenance_id,
                    _now(),
                ),
            )
            # An upsert that changed nothing (the run was already done) is no completion.
            if provenance_id is not None and db.execute("SELECT changes()").fetchone()[0]:
                column = "completed_runs" if outcome.ok else "failed_runs"
                db.execute(
                    f"UPDATE provenance SET {column} = {column} + 1 WHERE id = ?",
                    (provenance_id,),
                )

    def counts(self, keys: Iterable[str] | None = None) -> dict[str, int]:
        """Runs by state (done, failed, pending) among ``keys``, by default the stored plan's."""
        if keys is None:
            keys = {r[0] for r in self._db.execute("SELECT DISTINCT run_key FROM tasks")}
        status = dict(self._db.execute("SELECT run_key, status FROM runs").fetchall())
        counts = {"planned": 0, "done": 0, "failed": 0, "pending": 0}
        for key in set(keys):
            counts["planned"] += 1
            counts[status.get(key, "pending")] += 1
        return counts

    def failures(self, limit: int = 5) -> list[tuple[str, str]]:
        rows = self._db.execute(
            "SELECT run_key, error FROM runs WHERE status = 'failed' ORDER BY finished_at DESC "
            "LIMIT ?",
            (limit,),
        ).fetchall()
        return [(str(k), str(e)) for k, e in rows]

    def task_rows(self) -> list[dict[str, Any]]:
        """The current plan joined with the stored results (report left out; see :meth:`report`)."""
        cursor = self._db.execute(
            """
            SELECT t.task_id, t.run_key, t.role, t.design, t.point, t.variant, t.factors,
                   t.replication, t.seed, t.path, t.reference_keys,
                   COALESCE(r.status, 'pending') AS status, r.metrics, r.error, r.wall_s,
                   r.backend, r.backend_version, r.attempts
            FROM tasks t LEFT JOIN runs r ON r.run_key = t.run_key
            ORDER BY t.task_id
            """
        )
        names = [c[0] for c in cursor.description]
        rows = []
        for values in cursor:
            row = dict(zip(names, values, strict=True))
            owner = f"run {row['run_key']}"
            for field, expected in _JSON_FIELDS.items():
                if row[field] is not None:
                    row[field] = self._decoded(row[field], field, owner, expected)
            rows.append(row)
        return rows

    def report(self, run_key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT report FROM runs WHERE run_key = ?", (run_key,)).fetchone()
        if row is None or row[0] is None:
            return None
        return self._decoded(row[0], "report", f"run {run_key}", dict, compressed=True)

    def emulation_bottlenecked(self, keys: Iterable[str] | None = None) -> set[str]:
        """The finished emulator runs among ``keys`` (by default the stored plan's) whose
        fidelity check found the emulator, not the network, to be the bottleneck: they do not
        measure the kernel."""
        if keys is None:
            keys = {r[0] for r in self._db.execute("SELECT DISTINCT run_key FROM tasks")}
        wanted = set(keys)
        rows = self._db.execute(
            "SELECT run_key FROM runs WHERE status = 'done' AND backend = 'emu'"
        ).fetchall()
        flagged = set()
        for (key,) in rows:
            if key not in wanted:
                continue
            fidelity = (self.report(key) or {}).get("fidelity") or {}
            if fidelity.get("emulation_bottleneck"):
                flagged.add(str(key))
        return flagged

    def scenario(self, run_key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT scenario FROM runs WHERE run_key = ?", (run_key,)).fetchone()
        if row is None or row[0] is None:
            return None
        return self._decoded(row[0], "scenario", f"run {run_key}", dict, compressed=True)

    # --- provenance -------------------------------------------------------------------------

    def begin_provenance(
        self,
        *,
        mptcplab_version: str,
        git_revision: str | None,
        backend: str,
        backend_version: str,
        host: str,
        executor: str,
        jobs: int | None,
        planned_runs: int,
        campaign_path: str,
        campaign_text: str,
    ) -> int:
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO provenance(mptcplab_version, git_revision, backend, backend_version,"
                " host, executor, jobs, started_at, planned_runs, campaign_path, campaign_text)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    mptcplab_version,
                    git_revision,
                    backend,
                    backend_version,
                    host,
                    executor,
                    jobs,
                    _now(),
                    planned_runs,
                    campaign_path,
                    campaign_text,
                ),
            )
            return int(cursor.lastrowid or 0)

    def end_provenance(self, provenance_id: int) -> None:
        with self._transaction() as db:
            db.execute("UPDATE provenance SET ended_at = ? WHERE id = ?", (_now(), provenance_id))

    def provenance(self) -> list[dict[str, Any]]:
        cursor = self._db.execute("SELECT * FROM provenance ORDER BY id")
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, values, strict=True)) for values in cursor]

    def campaign_text(self) -> tuple[str, str] | None:
        """Path and text of the campaign that made the store's plan: the latest runner
        invocation's, even one that found every run done (stores written before the plan kept
        it: the latest invocation that ran something)."""
        path, text = self.meta("plan_campaign_path"), self.meta("plan_campaign_text")
        if path is not None and text is not None:
            return path, text
        row = self._db.execute(
            "SELECT campaign_path, campaign_text FROM provenance ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))
