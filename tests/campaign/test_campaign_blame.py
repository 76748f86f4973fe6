"""A campaign's mistakes are blamed where they were made: the template parameter a value went
to, the factor, level or option that set it, and the line; and the store goes where the file
says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign import build_plan, load
from mptcplab.campaign.plan import merged_notice
from mptcplab.errors import UserError
from mptcplab.scenario import templates


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(needle))


def _plan(path: Path):
    campaign = load(path)
    return campaign, build_plan(campaign, backend="sim", backend_version="test")


HEAD = """\
name = "blame"
seed = 1

[design]
kind = "lhs"
points = {points}

[scenario]
template = "{template}"
duration_s = 0.5
"""


@pytest.mark.parametrize(
    "template,params,field",
    [
        ("two_path", {"loss": 1.0}, "loss"),
        ("two_path", {"loss": (0.0, 1.5)}, "loss[1]"),
        ("two_path", {"rcvbuf": 100}, "rcvbuf"),
        ("two_path", {"rtt_ms": (20.0, 1e20)}, "rtt_ms[1]"),
        ("two_path", {"jitter_ms": 1e20}, "jitter_ms"),
        ("shared_ap", {"rtt_ms": 1e20}, "rtt_ms"),
        ("shared_ap", {"c1_mbps": 1e20}, "c1_mbps"),
        ("shared_ap", {"n1": 60_000, "n2": 60_000}, "n2"),
        ("multihomed_isp", {"cx_mbps": 1e300}, "cx_mbps"),
        ("two_ap", {"n1": 10**6}, "n1"),
        ("wifi_3g", {"rcvbuf_bytes": 100}, "rcvbuf_bytes"),
        ("responsiveness", {"queue_packets": 1e20}, "queue_packets"),
        ("responsiveness", {"one_way_ms": 1e20}, "one_way_ms"),
    ],
)
def test_a_template_names_its_parameter_not_the_scenario_field(
    template: str, params: dict, field: str
) -> None:
    # They named links[0].loss, flows[0].rcvbuf_bytes, links[0].delay_ms (with half or a
    # quarter of the value given), or raised pydantic's error about the RED queue.
    with pytest.raises(UserError) as info:
        templates.make(template, **params)
    assert info.value.field == field
    assert "links[" not in str(info.value) and "flows[" not in str(info.value)


def test_the_given_value_is_shown_not_the_one_derived_from_it() -> None:
    with pytest.raises(UserError) as info:
        templates.shared_ap(rtt_ms=1e20)
    assert "got 1e+20" in info.value.detail


@pytest.mark.parametrize(
    "factor,level_line",
    [
        ('[factors.buf.levels]\nauto = { rcvbuf = "auto" }\ntiny = { rcvbuf = 1000 }\n', "tiny"),
        ('[factors.buf]\nparam = "rcvbuf"\nlevels = [\n  "auto",\n  1000,\n]\n', "  1000"),
    ],
)
def test_a_level_the_template_rejects_is_blamed_at_that_level(
    write_campaign, factor: str, level_line: str
) -> None:
    # It was blamed on [scenario], which set nothing wrong.
    text = HEAD.format(points=2, template="two_path") + "\n" + factor
    with pytest.raises(UserError) as info:
        _plan(write_campaign(text))
    err = info.value
    assert err.line == _line_of(text, level_line)
    assert err.field is not None and err.field.startswith("factors.buf.levels")
    assert "rcvbuf = 1000" in err.detail


@pytest.mark.parametrize(
    "domain,end,param",
    [
        ("low = -5.0\nhigh = 20.0", "low", "capacity_mbps[1]"),
        ("low = 0.0\nhigh = 1.0", "high", "loss[0]"),
        ("low = 1.0\nhigh = 1e20", "high", "rtt_ms[1]"),
    ],
)
def test_a_domain_end_the_template_rejects_is_refused_on_loading(
    write_campaign, domain: str, end: str, param: str
) -> None:
    # With points = 3 no point landed outside the template's range and the campaign ran; with
    # 12 one did. The factor's ends are now checked whatever the design draws.
    text = HEAD.format(points=3, template="two_path") + (
        '\n[factors.cap0]\nlow = 1.0\nhigh = 20.0\nparam = "capacity_mbps[0]"\n'
        f'\n[factors.bad]\n{domain}\nparam = "{param}"\n'
    )
    with pytest.raises(UserError) as info:
        load(write_campaign(text))
    err = info.value
    assert err.field == f"factors.bad.{end}"
    assert err.line == _line_of(text, "[factors.bad]") + (1 if end == "low" else 2)
    assert param in err.detail


def test_domains_the_template_takes_load_as_before(write_campaign) -> None:
    campaign = load(write_campaign())
    assert [f.name for f in campaign.quantitative] == ["cap0", "cap1"]


@pytest.mark.parametrize(
    "changes,shown",
    [
        ({"factors.cap0.high": 0.5}, "factors.cap0.high=0.5"),
        (["factors.cap0.high=0.5"], "factors.cap0.high=0.5"),
    ],
)
def test_an_option_that_inverts_a_domain_is_named(write_campaign, changes, shown: str) -> None:
    # The message blamed the file's `low` line, which nobody changed.
    with pytest.raises(UserError) as info:
        load(write_campaign(), changes)
    err = info.value
    assert err.field == "factors.cap0.high" and err.line is None
    assert err.file is not None and err.file.endswith(shown)


def test_the_option_inverting_a_domain_is_named_on_the_command_line(write_campaign, cli) -> None:
    code, _, err = cli("status", str(write_campaign()), "--set", "factors.cap0.high=0.5")
    assert code == 2
    assert "--set factors.cap0.high=0.5: factors.cap0.high: domain low > high" in err


def test_changes_may_be_given_as_set_options(write_campaign) -> None:
    path = write_campaign()
    listed = load(path, ["replications=3", "scenario.duration_s=0.5"])
    mapped = load(path, {"replications": 3, "scenario.duration_s": 0.5})
    assert listed.spec.replications == 3
    assert listed.stored_text == mapped.stored_text


@pytest.mark.parametrize("changes", ["replications=3", ["replications"], [3], 5])
def test_changes_of_another_form_are_refused_by_name(write_campaign, changes) -> None:
    with pytest.raises(UserError) as info:
        load(write_campaign(), changes)
    assert info.value.field == "changes"
    assert "KEY=VALUE" in info.value.detail


def test_output_starts_at_the_home_folder_with_a_tilde(
    write_campaign, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A literal ./~ folder was made, and the printed `mptcplab report ~/...` hint failed.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    text = SMALL_CAMPAIGN.replace("[design]", 'output = "~/mini/store.sqlite"\n\n[design]')
    campaign = load(write_campaign(text))
    assert campaign.output == tmp_path / "home" / "mini" / "store.sqlite"


def test_a_relative_output_starts_at_the_current_folder(
    write_campaign, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the default results/<name>/ and -o do: stores of campaigns run as before stay put.
    text = SMALL_CAMPAIGN.replace("[design]", 'output = "relout/store.sqlite"\n\n[design]')
    path = write_campaign(text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert load(path).output == Path("relout/store.sqlite")


def test_status_says_where_a_relative_store_was_looked_for(write_campaign, cli) -> None:
    code, out, _ = cli("status", str(write_campaign()))
    assert code == 0 and "not started" in out
    assert "a relative output starts at the current folder" in out


INTEGER = HEAD.format(points=10, template="shared_ap") + (
    'warmup_s = 0.0\n\n[factors.n1]\nkind = "integer"\nlow = 1\nhigh = 2\n'
)


def test_points_merged_by_rounding_are_told(write_campaign, cli) -> None:
    # Ten points over an integer factor of two values planned two runs without a word.
    path = write_campaign(INTEGER)
    campaign, plan = _plan(path)
    assert len(plan.designs[0].values) == 2
    notice = merged_notice(campaign, plan)
    assert notice is not None and "n1" in notice and "2 distinct points of the 10 drawn" in notice
    code, out, _ = cli("status", str(path))
    assert code == 0 and "2 distinct points of the 10 drawn" in out


def test_no_notice_when_no_point_merged(write_campaign) -> None:
    campaign, plan = _plan(write_campaign())
    assert merged_notice(campaign, plan) is None


ONE_RUN = HEAD.format(points=1, template="two_path") + (
    '\n[factors.cap0]\nlow = 1.0\nhigh = 2.0\nparam = "capacity_mbps[0]"\n'
)


@pytest.mark.parametrize(
    "body,line",
    [
        ("run_campaign({args})\n", 2),
        ("def main():\n    run_campaign({args})\n\n\nmain()\n", 6),
        # Not a guard under spawn: the worker runs the script before its parent is known.
        (
            "import multiprocessing\nif multiprocessing.parent_process() is None:\n"
            "    run_campaign({args})\n",
            4,
        ),
    ],
)
def test_an_unguarded_script_is_refused_before_the_store_is_made(
    tmp_path: Path, body: str, line: int
) -> None:
    # Every run was stored as failed ("the worker process died") once the workers, importing
    # the script, had each tried to run the campaign again.
    (tmp_path / "one.toml").write_text(ONE_RUN)
    store = tmp_path / "out" / "store.sqlite"
    args = f"load({str(tmp_path / 'one.toml')!r}), jobs=1, output={str(store)!r}, progress=False"
    script = tmp_path / "script.py"
    script.write_text("from mptcplab.campaign import load, run_campaign\n" + body.format(args=args))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0
    assert f"{script}:{line}: run_campaign is called at the top level" in done.stderr
    assert not store.exists()


def test_a_guarded_script_runs(tmp_path: Path) -> None:
    (tmp_path / "one.toml").write_text(ONE_RUN)
    store = tmp_path / "out" / "store.sqlite"
    script = tmp_path / "script.py"
    script.write_text(
        "from mptcplab.campaign import load, run_campaign\n\n"
        'if __name__ == "__main__":\n'
        f"    s = run_campaign(load({str(tmp_path / 'one.toml')!r}), jobs=1, "
        f"output={str(store)!r}, progress=False)\n"
        "    print(s.completed, s.failed)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0"]


def test_a_script_from_standard_input_is_refused_before_the_store_is_made(tmp_path: Path) -> None:
    # Each worker tried to run the file "<stdin>" again: every run was stored as failed.
    (tmp_path / "one.toml").write_text(ONE_RUN)
    store = tmp_path / "out" / "store.sqlite"
    script = (
        "from mptcplab.campaign import load, run_campaign\n"
        f"run_campaign(load({str(tmp_path / 'one.toml')!r}), jobs=1, output={str(store)!r}, "
        "progress=False)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0
    assert "a script read from standard input?" in done.stderr
    assert not store.exists()
