"""Every file a command writes where the user said: a place that cannot be written is one line
naming the file and the reason, exit code 2, never a traceback. The parent "folder" is a regular
file, which no user (root included) can create a file under."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign import load, run_campaign
from mptcplab.errors import UserError
from mptcplab.outputs import writing

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def blocked(tmp_path: Path) -> Path:
    """A path whose parent is a regular file."""
    wall = tmp_path / "a-file"
    wall.write_text("not a folder\n")
    return wall / "out"


def _one_line(code: int, err: str, path: Path, what: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {path}") and f"cannot write {what}" in lines[0], lines


def test_writing_makes_the_folder_and_turns_os_errors_into_user_errors(
    tmp_path: Path, blocked: Path
) -> None:
    with writing(tmp_path / "new" / "folder" / "x.txt", "the thing") as out:
        out.write_text("ok")
    assert (tmp_path / "new" / "folder" / "x.txt").read_text() == "ok"
    with (
        pytest.raises(UserError, match=r"a-file/out/x.txt: cannot write the thing: "),
        writing(blocked / "x.txt", "the thing") as out,
    ):
        out.write_text("never")


def test_report_export_design_and_run_refuse_an_unwritable_place_in_one_line(
    write_campaign, cli, tmp_path: Path, blocked: Path
) -> None:
    path = write_campaign()
    store = tmp_path / "store.sqlite"
    run_campaign(load(path), output=store, progress=False)

    target = blocked / "report.html"
    _one_line(*cli("report", str(store), "-o", str(target))[::2], target, "the report")
    for option in ("--csv", "--parquet"):
        target = blocked / f"runs.{option[2:]}"
        _one_line(*cli("export", str(store), option, str(target))[::2], target, "the export")
    target = blocked / "design.csv"
    code, _, err = cli("design", "--kind", "lhs", "-d", "2", "-n", "4", "-o", str(target))
    _one_line(code, err, target, "the design")
    target = blocked / "report.json"
    code, _, err = cli(
        "sim", str(ROOT / "scenarios" / "default.toml"), "--duration", "1", "-o", str(target)
    )
    _one_line(code, err, target, "the report")

    target = blocked / "store.sqlite"
    elsewhere = write_campaign(
        SMALL_CAMPAIGN.replace("[design]", f'output = "{target}"\n\n[design]'), "elsewhere.toml"
    )
    _one_line(*cli("run", str(elsewhere))[::2], target, "the store")


def test_an_unwritable_output_is_refused_before_the_work_it_would_hold(
    write_campaign, cli, tmp_path: Path, blocked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A design of thousands of points or the report of a large store takes minutes: an output
    that cannot be written is refused before that work starts, not after it."""
    import mptcplab.analysis.report as report_module
    import mptcplab.design as design_module

    store = tmp_path / "store.sqlite"
    run_campaign(load(write_campaign()), output=store, progress=False)

    def not_now(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the work started before the output was checked")

    monkeypatch.setattr(report_module, "build_report", not_now)
    monkeypatch.setattr(report_module, "variant_comparisons", not_now)
    monkeypatch.setattr(design_module, "generate", not_now)

    target = blocked / "report.html"
    _one_line(*cli("report", str(store), "-o", str(target))[::2], target, "the report")
    target = blocked / "compare.csv"
    _one_line(*cli("compare", str(store), "--csv", str(target))[::2], target, "the comparisons")
    target = blocked / "design.csv"
    code, out, err = cli("design", "--kind", "wsp", "-d", "3", "-n", "50", "-o", str(target))
    _one_line(code, err, target, "the design")
    assert out == ""


def test_an_output_that_is_the_input_is_refused_before_anything_is_written(
    write_campaign, cli, tmp_path: Path
) -> None:
    # Each of these replaced the store, the campaign or the scenario it read with its output.
    path = write_campaign()
    store = tmp_path / "store.sqlite"
    run_campaign(load(path), output=store, progress=False)
    scenario = tmp_path / "scenario.toml"
    scenario.write_bytes((ROOT / "scenarios" / "default.toml").read_bytes())
    kept = {p: p.read_bytes() for p in (store, path, scenario)}
    cases = [
        (("report", str(store), "-o", str(store)), store, "the report"),
        (("export", str(store), "--csv", str(store)), store, "the export"),
        (("export", str(store), "--parquet", str(store)), store, "the export"),
        (("compare", str(store), "--csv", str(store)), store, "the comparisons"),
        (("design", str(path), "-o", str(path)), path, "the design"),
        (("sim", str(scenario), "-o", str(scenario)), scenario, "the report"),
    ]
    for args, target, what in cases:
        code, _, err = cli(*args)
        _one_line(code, err, target, what)
        assert "which this command reads" in err
    assert all(p.read_bytes() == text for p, text in kept.items())
