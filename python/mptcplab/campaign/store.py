"""The campaign store: one SQLite file per campaign, one committed row per finished run.

Tables (``FORMAT_VERSION`` changes whenever one changes meaning; older stores are refused with a
message rather than misread):

- ``meta``: key/value pairs — ``format_version``, ``campaign`` (the campaign's name).
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

import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mptcplab.errors import UserError
from mptcplab.outputs import make_folder

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
    """A campaign's SQLite store. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            inside = self.path / "store.sqlite"
            if inside.is_file():  # the campaign's results folder, given for its store
                raise UserError(f"{self.path} is a folder; its store is {inside}", field="STORE")
            raise UserError(f"no store at {self.path}", field="STORE")
        if create:
            make_folder(self.path, "the store")  # SQLite creates the file
        try:
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            if create:
                self._db.executescript(_SCHEMA)
            self._check_version(create)
        except sqlite3.DatabaseError as exc:
            raise UserError(f"not a campaign store ({exc})", file=str(self.path)) from None

    def _check_version(self, create: bool) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        if "meta" not in tables:
            raise UserError("not a campaign store (no meta table)", file=str(self.path))
        row = self._db.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone()
        if row is None:
            if not create:
                raise UserError("not a campaign store (no format version)", file=str(self.path))
            self._set_meta("format_version", str(FORMAT_VERSION))
            return
        version = int(row[0])
        if version != FORMAT_VERSION:
            newer = "a newer" if version > FORMAT_VERSION else "an older"
            raise UserError(
                f"store format {version} comes from {newer} mptcplab; this one reads format "
                f"{FORMAT_VERSION}",
                file=str(self.path),
            )

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
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # --- meta -------------------------------------------------------------------------------

    def _set_meta(self, key: str, value: str) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

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

    # --- plan -------------------------------------------------------------------------------

    def replace_plan(
        self,
        tasks: Iterable[TaskRow],
        designs: Iterable[tuple[int, str, Sequence[str], Sequence[Sequence[float]]]],
    ) -> None:
        """Record the campaign's current plan (its designs and tasks) in one transaction."""
        with self._transaction() as db:
            db.execute("DELETE FROM tasks")
            db.execute("DELETE FROM designs")
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
                "factor_names": json.loads(r[2]),
                "unit_points": json.loads(r[3]),
            }
            for r in rows
        ]

    # --- runs -------------------------------------------------------------------------------

    def finished_keys(self) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT run_key FROM runs WHERE status = 'done'")}

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
            if provenance_id is not None:
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
            for field in ("variant", "factors", "metrics", "reference_keys"):
                row[field] = None if row[field] is None else json.loads(row[field])
            rows.append(row)
        return rows

    def report(self, run_key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT report FROM runs WHERE run_key = ?", (run_key,)).fetchone()
        return None if row is None else decompress_json(row[0])

    def scenario(self, run_key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT scenario FROM runs WHERE run_key = ?", (run_key,)).fetchone()
        return None if row is None else decompress_json(row[0])

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
        """Path and text of the campaign file of the latest runner invocation."""
        row = self._db.execute(
            "SELECT campaign_path, campaign_text FROM provenance ORDER BY id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))
