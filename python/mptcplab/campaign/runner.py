"""Run a campaign: plan it, skip what the store already holds, execute the rest, commit each run.

Re-running a campaign is always safe: finished runs are skipped, failed ones retried. Each
outcome is committed as soon as it arrives, so an interruption (Ctrl-C, SIGTERM, even kill -9)
loses only the runs that were executing.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from rich import get_console
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

import mptcplab
from mptcplab.campaign.backends import BACKENDS, Backend, BackendUnavailable, import_ref
from mptcplab.campaign.executors import Task, check_executor, make_executor
from mptcplab.campaign.main_script import called_from_unguarded_script, check_main_script
from mptcplab.campaign.plan import Plan, build_plan, merged_notice
from mptcplab.campaign.spec import Campaign
from mptcplab.campaign.store import Store
from mptcplab.errors import UserError
from mptcplab.stopping import termination_as_interrupt


@dataclass(frozen=True)
class RunSummary:
    store: Path
    planned: int  # distinct runs of the campaign
    already_done: int
    completed: int
    failed: int
    interrupted: bool = False


def git_revision() -> str | None:
    """The checkout's commit (``+dirty`` when it has changes), or None outside a git checkout."""
    where = Path(mptcplab.__file__).resolve().parent
    try:
        rev = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{rev}+dirty" if dirty else rev


def backend_of(campaign: Campaign, name: str | None = None) -> tuple[Backend, str]:
    """A backend of the campaign (``name``, default its first) and its version string."""
    backend = BACKENDS[name if name is not None else campaign.backend_names[0]]
    try:
        version = backend.version_string()
    except (ImportError, BackendUnavailable) as exc:
        key = "backends" if campaign.cross_validation else "backend"
        raise UserError(
            f"backend '{backend.name}' is not available here: {exc} (`make build` builds the "
            "backends; `mptcplab doctor` checks the machine)",
            **campaign.where(key),
        ) from None
    return backend, version


def backends_of(campaign: Campaign) -> dict[str, tuple[Backend, str]]:
    """Every backend of the campaign with its version string (all must be available)."""
    return {name: backend_of(campaign, name) for name in campaign.backend_names}


def plan_campaign(
    campaign: Campaign, progress: Callable[[int, int], None] | None = None
) -> tuple[Plan, Backend, str]:
    """The plan, and the first backend of the campaign with its version. ``progress`` is told
    how far the designs' generation is (``build_plan``)."""
    backends = backends_of(campaign)
    versions = {name: version for name, (_, version) in backends.items()}
    first, version = next(iter(backends.values()))
    return build_plan(campaign, versions=versions, progress=progress), first, version


def _refuse_what_backends_cannot_run(
    campaign: Campaign, plan: Plan, backends: dict[str, tuple[Backend, str]]
) -> None:
    """Every run's scenario past its backend's check, before the first run: a kernel without
    the scheduler the template asks for refuses the campaign once, not each of its runs."""
    checks = {name: import_ref(b.check) for name, (b, _) in backends.items() if b.check}
    if not checks:
        return
    for run in plan.unique_runs().values():
        check = checks.get(run.backend)
        if check is None:
            continue
        try:
            check(run.scenario)
        except UserError as exc:
            raise UserError(
                f"backend '{run.backend}' cannot run the scenarios this [scenario] and these "
                f"factors build: {exc}",
                **campaign.where("scenario"),
            ) from None


#: Where the progress bar cannot redraw (a log file, a pipe), a plain line this often instead.
LOG_EVERY_S = 60.0


def _progress(console: Console | None, enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=None),  # the bar gives way, not the figures, on a narrow line
        MofNCompleteColumn(),
        TextColumn("[red]{task.fields[failed]} failed"),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled,
        transient=False,
    )


def _planning(console: Console | None, enabled: bool) -> Progress:
    """While the plan is built: elapsed time, and how far the design generation is and how long
    it has left where it says (WSP); on a terminal only, gone once the runs start."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=None),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled or not (console or get_console()).is_terminal,
        transient=True,
    )


def _recompute_stale_metrics(store: Store, console: Console | None) -> None:
    """Bring the stored runs' metrics to this mptcplab's definitions (see
    :mod:`mptcplab.analysis.metrics_version`), so that a resumed campaign never sets values
    of two definitions side by side."""
    from mptcplab.analysis.metrics import run_metrics
    from mptcplab.analysis.metrics_version import metrics_fingerprint

    fingerprint = metrics_fingerprint()
    if store.meta("metrics_fingerprint") == fingerprint:
        return
    recomputed = store.recompute_metrics(run_metrics, fingerprint)
    if recomputed:
        (console or get_console()).print(
            f"[yellow]notice[/]: recomputed the metrics of {recomputed} stored runs from their "
            "reports: this mptcplab defines them differently from the one that ran them"
        )


def how_planned(campaign_file: Path, last_text: str) -> str:
    """How the campaign text ``last_text`` (the one that made a store's plan) differs from the
    file ``campaign_file`` as it reads now: "with --set ..." when only its options do, else
    "from a different version of the campaign file ...", for messages."""
    from mptcplab.campaign import load
    from mptcplab.campaign.overrides import stored

    changes = stored(last_text)
    # As annotate() wrote them, and as --set reads them back.
    options = ", ".join(
        f"--set {o.dotted}={json.dumps(o.value, ensure_ascii=False)}" for o in changes
    )
    try:
        # The file as it reads now, with the last run's options (or none): then only this
        # command's --set options differ from that run's.
        only_options = load(campaign_file, changes).stored_text == last_text
    except UserError:  # those options no longer apply to the file as it is
        only_options = False
    if only_options:
        return f"with {options}" if changes else "without --set options"
    how = "from a different version of the campaign file (or of its scenario file)"
    return f"{how}, with {options}" if changes else how


def _warn_replaced_plan(
    store: Store, campaign: Campaign, planned: Iterable[str], console: Console | None
) -> None:
    """Say, before the store's plan is replaced by another campaign's, how many stored runs the
    new plan leaves out: they stay in the store, but status, report and export follow the plan,
    so without a word the store would fill with runs that nothing shows."""
    last = store.campaign_text()
    if last is None or last[1] == campaign.stored_text:
        return
    stored_keys = store.run_keys()
    if not stored_keys:  # nothing to leave out
        return
    left_out = len(stored_keys - set(planned))
    if left_out:
        fate = (
            f"which leaves out {left_out} of the {len(stored_keys)} runs stored (they stay in "
            "the store, but status, report and export follow the new plan)"
        )
    else:
        fate = f"which takes in all {len(stored_keys)} runs stored"
    text = escape(
        f"{campaign.path}: the store's runs were last planned "
        f"{how_planned(campaign.path, last[1])}; this run replaces that plan with its own, {fate}"
    )
    (console or get_console()).print(f"[yellow]warning[/]: {text}")


def run_campaign(
    campaign: Campaign,
    *,
    jobs: int | None = None,
    executor: str = "local",
    address: str | None = None,
    output: Path | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> RunSummary:
    """Execute every run of ``campaign`` that its store does not hold yet. ``jobs``: parallel
    runs, an integer ≥ 1 (default: one per core).

    The local executor starts its workers with ``spawn``: each imports the script that called
    this function, so a script must call it under ``if __name__ == "__main__":`` (a notebook
    need not); a call at a script's top level outside the guard is refused, naming its line,
    before the store is touched."""
    if called_from_unguarded_script():
        # A worker re-running the unguarded script would start a campaign of its own.
        raise RuntimeError(
            "run_campaign was called while a campaign worker started: put the call in the "
            'script under `if __name__ == "__main__":` (workers import the script)'
        )
    # Before the store is made or its plan replaced, and whether or not work is left.
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise UserError(f"expected an integer ≥ 1, got {jobs!r}", field="jobs")
    check_executor(executor, address=address)
    if executor == "local":
        check_main_script()
    backends = backends_of(campaign)
    # Planning generates the designs: minutes for a WSP design of thousands of points.
    with _planning(console, progress) as planning:
        task = planning.add_task(f"{campaign.name}: planning the runs", total=None)

        def generated(done: int, expected: int) -> None:
            planning.update(task, completed=done, total=expected)

        plan = build_plan(
            campaign,
            versions={name: version for name, (_, version) in backends.items()},
            progress=generated,
        )
    notice = merged_notice(campaign, plan)
    if notice is not None:
        text = escape(f"{campaign.name}: {notice}")
        (console or get_console()).print(f"[yellow]notice[/]: {text}")
    names = "+".join(backends)
    version = " + ".join(version for _, version in backends.values())
    store_path = output if output is not None else campaign.output
    _refuse_what_backends_cannot_run(campaign, plan, backends)
    with Store(store_path, create=True) as store, store.sole_writer():
        store.claim(campaign.name)
        runs = plan.unique_runs()
        done = store.finished_keys() & runs.keys()
        todo = [run for key, run in runs.items() if key not in done]
        runner = None
        if todo:
            # One serial backend (the emulator) makes the whole campaign serial: a simulator
            # run beside an emulator run would take the CPU that forwards the emulated packets.
            serial = any(backend.serial for backend, _ in backends.values())
            # Connected before the plan is replaced: a cluster that refuses this driver leaves
            # the store as the last run left it.
            runner = make_executor(executor, jobs=jobs, address=address, serial=serial)
        try:
            _warn_replaced_plan(store, campaign, runs.keys(), console)
            store.replace_plan(
                (t.row for t in plan.tasks),
                ((d.index, d.kind, d.factor_names, d.unit_points.tolist()) for d in plan.designs),
                campaign=(str(campaign.path), campaign.stored_text),
            )
            _recompute_stale_metrics(store, console)
            if runner is None:
                return RunSummary(store_path, len(runs), len(done), 0, 0)
            provenance = store.begin_provenance(
                mptcplab_version=mptcplab.__version__,
                git_revision=git_revision(),
                backend=names,
                backend_version=version,
                host=socket.gethostname(),
                executor=runner.name,
                jobs=runner.workers,
                planned_runs=len(runs),
                campaign_path=str(campaign.path),
                campaign_text=campaign.stored_text,
            )
        except BaseException:
            if runner is not None:
                runner.close()
            raise
        failed = 0  # for the bar; the summary's counts come from the store
        interrupted = False
        bar = _progress(console, progress)
        try:
            with termination_as_interrupt(), bar:
                bar_task = bar.add_task(
                    f"{campaign.name} ({runner.workers} {runner.name} workers)",
                    total=len(todo),
                    failed=0,
                )
                tasks = (Task(r.row.run_key, backends[r.backend][0].run, r.scenario) for r in todo)
                # Rich draws the bar of a console that is no terminal once, at the end.
                logged = time.monotonic() if progress and not bar.console.is_terminal else None
                for finished, outcome in enumerate(runner.run(tasks), start=1):
                    run = runs[outcome.run_key]
                    store.record(
                        run.row,
                        outcome,
                        scenario=run.scenario,
                        backend=run.backend,
                        backend_version=backends[run.backend][1],
                        provenance_id=provenance,
                    )
                    failed += not outcome.ok
                    bar.update(bar_task, advance=1, failed=failed)
                    if logged is not None and time.monotonic() - logged >= LOG_EVERY_S:
                        logged = time.monotonic()
                        elapsed = bar.tasks[0].elapsed or 0.0
                        bar.console.print(
                            f"{campaign.name}: {finished}/{len(todo)} runs, {failed} failed, "
                            f"{elapsed:.0f} s",
                            highlight=False,
                        )
        except KeyboardInterrupt:
            interrupted = True
        finally:
            # The provenance row is closed even when stopping the workers fails.
            try:
                runner.close()
            finally:
                store.end_provenance(provenance)
        # The store counts this invocation's runs in the transaction that commits each, so a
        # Ctrl-C between a commit and the bar's counter does not leave one out.
        row = next(r for r in store.provenance() if r["id"] == provenance)
        completed, failed = int(row["completed_runs"]), int(row["failed_runs"])
        summary = RunSummary(store_path, len(runs), len(done), completed, failed, interrupted)
    if interrupted:
        raise CampaignInterrupted(summary)
    return summary


class CampaignInterrupted(KeyboardInterrupt):
    """The campaign was stopped; ``summary`` tells what was committed before."""

    def __init__(self, summary: RunSummary) -> None:
        super().__init__("interrupted")
        self.summary = summary
