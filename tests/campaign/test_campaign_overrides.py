"""Keys set when a campaign is run (`mptcplab run FILE --set KEY=VALUE`, `load(path, changes)`):
the same runs as the file edited by hand, problems named by the option, and the changes kept
with the stored runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign_cases import PUBLISHED, SMALL_CAMPAIGN

from mptcplab.campaign import Store, build_plan, load
from mptcplab.campaign.overrides import annotate, parse_option, stored
from mptcplab.errors import UserError


def _keys(path: Path, changes=None) -> set[str]:
    return set(build_plan(load(path, changes), versions={"sim": "v"}).unique_runs())


def test_set_gives_the_runs_of_the_file_edited_by_hand(write_campaign) -> None:
    original = write_campaign()
    edited = write_campaign(
        SMALL_CAMPAIGN.replace("replications = 2", "replications = 1")
        .replace("duration_s = 1.0", "duration_s = 0.5")
        .replace('levels = ["lia", "olia"]', 'levels = ["balia"]')
        .replace("[scenario]", '[scenario]\nscheduler = "roundrobin"'),
        "edited.toml",
    )
    options = [
        "replications=1",
        "scenario.duration_s=0.5",
        'factors.cc.levels=["balia"]',
        "scenario.scheduler=roundrobin",  # a bare word is a string
    ]
    changed = _keys(original, [parse_option(o) for o in options])
    assert changed == _keys(edited)
    assert changed != _keys(original)
    # From Python, the same changes as a mapping of dotted keys.
    as_mapping = {
        "replications": 1,
        "scenario.duration_s": 0.5,
        "factors.cc.levels": ["balia"],
        "scenario.scheduler": "roundrobin",
    }
    assert _keys(original, as_mapping) == changed


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("backend=emu", "emu"),
        ("replications = 3", 3),
        ("scenario.duration_s=2.5", 2.5),
        ("reference_runs=true", True),
        ("factors.q.levels=[50, 100]", [50, 100]),
        ('description="two words"', "two words"),
        ("description=two words", "two words"),
        ("scenario.rcvbuf={ kind = 'auto' }", {"kind": "auto"}),
    ],
)
def test_values_are_read_as_toml_and_bare_words_as_text(raw: str, value: object) -> None:
    assert parse_option(raw).value == value


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("replications", "expected KEY=VALUE"),
        ("=3", "expected KEY=VALUE with a dotted key"),
        ("[0]=3", "expected KEY=VALUE with a dotted key"),
        ("a..b=3", "expected KEY=VALUE with a dotted key"),
    ],
)
def test_a_malformed_option_is_refused(raw: str, words: str) -> None:
    with pytest.raises(UserError, match=words):
        parse_option(raw)


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        ("backend=emux", "backend", "unknown backend 'emux'; did you mean 'emu'?"),
        ("replications=0", "replications", "expected a value ≥ 1"),
        ("scenario.duratoin_s=2", "scenario.duratoin_s", "did you mean 'duration_s'?"),
        ("desing.points=4", "desing", "unknown key 'desing'"),
        ("name.first=x", None, "'name' is a string in the campaign, not a table"),
        ("factors.cc.levels[5]=x", None, "'factors.cc.levels' has 2 elements in the campaign"),
        ("name[0]=x", None, "'name' is a string in the campaign, not a list"),
        ("published[0].value=1", None, "the campaign has no 'published' list"),
    ],
)
def test_a_problem_in_a_set_key_names_the_option(
    write_campaign, raw: str, field: str | None, words: str
) -> None:
    path = write_campaign()
    with pytest.raises(UserError) as caught:
        load(path, [parse_option(raw)])
    error = caught.value
    assert words in error.detail
    assert error.file == f"{path}, --set {raw}"
    assert error.line is None
    assert error.field == field


def test_a_problem_in_the_file_keeps_its_line(write_campaign) -> None:
    text = SMALL_CAMPAIGN.replace("points = 3", "points = -3")
    path = write_campaign(text)
    with pytest.raises(UserError) as caught:
        load(path, [parse_option("replications=1")])
    assert caught.value.file == str(path)
    assert caught.value.line == text.splitlines().index("points = -3") + 1


def test_stored_changes_read_back() -> None:
    options = [
        parse_option("backend=emu"),
        parse_option("scenario.rcvbuf={ kind = 'auto', cap = 4194304 }"),
        parse_option("published[0].label=«débit»"),
        parse_option('factors."rtt.ms".levels=[10, 20]'),
    ]
    text = annotate("name = 'x'\n", options)
    assert text.startswith("name = 'x'\n")
    back = stored(text)
    assert [(o.key, o.value) for o in back] == [(o.key, o.value) for o in options]
    assert stored("name = 'x'\n") == ()
    assert annotate("name = 'x'\n", []) == "name = 'x'\n"


def test_run_with_set_stores_the_changes_and_the_report_uses_them(
    write_campaign, cli, tmp_path
) -> None:
    from mptcplab.analysis.report import build_report, published_comparison

    path = write_campaign(SMALL_CAMPAIGN + PUBLISHED + "tolerance = 0.5\n")
    store = tmp_path / "changed" / "store.sqlite"
    code, _, err = cli(
        "run",
        str(path),
        "-q",
        "-o",
        str(store),
        "--set",
        "replications=1",
        "--set",
        "published[0].tolerance=100",
    )
    assert code == 0, err
    with Store(store) as s:
        assert len(s.task_rows()) == 6  # 3 points × 2 levels × 1 replication
        stored_text = s.campaign_text()
    assert stored_text is not None
    assert "#   published[0].tolerance = 100" in stored_text[1]
    compared = published_comparison(store)
    assert compared is not None
    # Any goodput is within ±100 of 5 Mbit/s: the stored tolerance is the one that was set.
    assert compared["tolerance"].tolist() == [100]
    assert "published[0].tolerance = 100" in build_report(store)

    code, out, err = cli("status", str(path), "--set", "replications=1", "--set", f"output={store}")
    assert code == 0, err
    assert "6 runs planned" in out and "6 done" in out
    code, _, err = cli("status", str(store), "--set", "replications=1")
    assert code == 2 and "--set: changes a campaign file" in err


def test_a_table_the_file_lacks_is_created(write_campaign) -> None:
    path = write_campaign()
    campaign = load(path, [parse_option("design.options.optimize=false")])
    assert campaign.spec.design.options == {"optimize": False}


@pytest.mark.parametrize(
    ("raw", "field", "line_of"),
    [
        ("factors.cap0.low=nan", "factors.cap0", "[factors.cap0]"),
        ("design.options.bogus=1", "design", "[design]"),
    ],
)
def test_a_problem_at_a_table_an_option_changed_names_both(
    write_campaign, raw: str, field: str, line_of: str
) -> None:
    path = write_campaign()
    with pytest.raises(UserError) as caught:
        build_plan(load(path, [parse_option(raw)]), versions={"sim": "v"})
    assert caught.value.file == str(path)
    assert caught.value.line == SMALL_CAMPAIGN.splitlines().index(line_of) + 1
    assert caught.value.field == f"{field} (changed by --set {raw})"


def test_a_level_an_option_set_that_the_template_rejects_names_the_option(
    write_campaign,
) -> None:
    path = write_campaign()
    raw = 'factors.cc.levels=["bbr"]'
    with pytest.raises(UserError) as caught:
        build_plan(load(path, [parse_option(raw)]), versions={"sim": "v"})
    assert caught.value.file == f"{path}, --set {raw}"
    assert caught.value.field == "factors.cc.levels[0]"


def test_a_problem_at_a_table_the_file_has_keeps_its_line(write_campaign) -> None:
    # The runner reports a scenario its backend refuses at [scenario]: the table's line, and the
    # option that changed one of its keys beside it.
    path = write_campaign()
    campaign = load(path, [parse_option("scenario.scheduler=roundrobin")])
    where = campaign.where("scenario")
    assert where["file"] == str(path)
    assert where["line"] == SMALL_CAMPAIGN.splitlines().index("[scenario]") + 1
    assert where["field"] == "scenario (changed by --set scenario.scheduler=roundrobin)"
    assert campaign.where("scenario", "scheduler")["file"].endswith(
        "--set scenario.scheduler=roundrobin"
    )


def test_design_shows_the_design_of_the_changed_campaign(write_campaign, cli) -> None:
    path = write_campaign()
    code, out, err = cli("design", str(path), "--set", "design.points=5", "--show", "0")
    assert code == 0, err
    assert "5 points × 2 factors" in out
    code, _, err = cli("design", "--kind", "lhs", "-d", "2", "-n", "4", "--set", "design.points=5")
    assert code == 2 and "--set: changes a campaign file, and none is given" in err


def test_setting_one_of_backend_and_backends_replaces_the_other(write_campaign) -> None:
    crossval = write_campaign(
        SMALL_CAMPAIGN.replace("replications = 2", 'backends = ["sim", "emu"]')
    )
    narrowed = load(crossval, [parse_option("backend=sim")])
    assert narrowed.spec.backends is None and narrowed.spec.backend == "sim"
    single = write_campaign(
        SMALL_CAMPAIGN.replace("replications = 2", 'backend = "sim"'), "one.toml"
    )
    widened = load(single, [parse_option('backends=["sim", "emu"]')])
    assert widened.spec.backends == ["sim", "emu"]
    # Written both ways in the file, the two keys are still refused.
    both = write_campaign(
        SMALL_CAMPAIGN.replace("replications = 2", 'backend = "sim"\nbackends = ["sim"]'),
        "both.toml",
    )
    with pytest.raises(UserError, match="give either `backend`"):
        load(both)


def test_setting_a_scenario_file_replaces_the_template(write_campaign, tmp_path: Path) -> None:
    (tmp_path / "net.toml").write_text(
        'duration_s = 1.0\n[[links]]\nid = "a"\ncapacity_mbps = 5.0\ndelay_ms = 5.0\n'
        'queue = { kind = "droptail", packets = 20 }\n'
        '[[flows]]\nid = "f"\nprotocol = "tcp"\ncc = "reno"\npaths = [["a"]]\n'
        'app = { kind = "bulk" }\n'
    )
    path = write_campaign(
        SMALL_CAMPAIGN.replace("rtt_ms = [10.0, 30.0]\n", "")
        .replace('param = "capacity_mbps[0]"', 'param = "links[a].capacity_mbps"')
        .replace('param = "capacity_mbps[1]"', 'param = "links[a].delay_ms"')
        .replace('levels = ["lia", "olia"]', 'levels = ["reno", "cubic"]\nparam = "flows[f].cc"')
    )
    campaign = load(path, [parse_option("scenario.file=net.toml")])
    assert campaign.spec.scenario.template is None
    assert campaign.spec.scenario.file == "net.toml"
