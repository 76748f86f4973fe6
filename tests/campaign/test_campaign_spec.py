"""Campaign files: every kind of mistake gives one message naming the file, the line and the key,
and the CLI exits with code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign_cases import PUBLISHED, SMALL_CAMPAIGN

from mptcplab.campaign import build_plan, load
from mptcplab.errors import UserError
from mptcplab.scenario import templates


def _line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing ``needle`` (the oracle for error lines)."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the campaign text")


def _published(old: str, new: str):
    def edit(text: str) -> str:
        assert old in PUBLISHED
        return text + PUBLISHED.replace(old, new)

    return edit


# (name, edit of SMALL_CAMPAIGN, text of the offending line, dotted key, words the message has)
BAD_FILES = [
    (
        "misspelt top-level key",
        lambda t: t.replace("replications = 2", "replicatons = 2"),
        "replicatons = 2",
        "replicatons",
        ["unknown key 'replicatons'", "did you mean 'replications'"],
    ),
    (
        "misspelt factor key",
        lambda t: t.replace(
            'high = 20.0\nparam = "capacity_mbps[1]"', 'hihg = 20.0\nparam = "capacity_mbps[1]"'
        ),
        "hihg = 20.0",
        "factors.cap1.hihg",
        ["unknown key 'hihg'", "did you mean 'high'"],
    ),
    (
        "domain low > high",
        lambda t: t.replace(
            "low = 1.0\nhigh = 20.0\nlog = true", "low = 30.0\nhigh = 20.0\nlog = true"
        ),
        "low = 30.0",
        "factors.cap0.low",
        ["low > high", "30.0 > 20.0"],
    ),
    (
        # Extra keys of [scenario] are template parameters, so the typo is not refused as
        # unknown; the missing template points at it.
        "misspelt template key",
        lambda t: t.replace('template = "two_path"', 'templat = "two_path"'),
        'templat = "two_path"',
        "scenario.template",
        ["missing key 'template'", "is 'templat' meant?"],
    ),
    (
        "unknown template",
        lambda t: t.replace('template = "two_path"', 'template = "two_paths"'),
        'template = "two_paths"',
        "scenario.template",
        ["unknown template 'two_paths'", "did you mean 'two_path'"],
    ),
    (
        "factor mapped to an unknown template parameter",
        lambda t: t.replace('param = "capacity_mbps[1]"', 'param = "capacity[1]"'),
        'param = "capacity[1]"',
        "factors.cap1.param",
        ["has no parameter 'capacity'", "did you mean 'capacity_mbps'"],
    ),
    (
        "qualitative factor named after no template parameter",
        lambda t: t.replace("[factors.cc]", "[factors.congestion]"),
        "[factors.congestion]",
        "factors.congestion",
        ["has no parameter 'congestion'"],
    ),
    (
        "unknown metric",
        lambda t: t.replace('"goodput_mbps"]', '"goodput"]'),
        "metrics = ",
        "metrics[1]",
        ["unknown metric 'goodput'", "did you mean 'goodput_mbps'"],
    ),
    (
        "reference metric without reference runs",
        lambda t: t.replace('"goodput_mbps"]', '"log_gain"]'),
        "metrics = ",
        "metrics[1]",
        ["reference_runs = true"],
    ),
    (
        "wrong type",
        lambda t: t.replace("replications = 2", 'replications = "2"'),
        'replications = "2"',
        "replications",
        ["expected an integer", "'2'"],
    ),
    (
        "unknown design kind",
        lambda t: t.replace('kind = "lhs"', 'kind = "lsh"'),
        'kind = "lsh"',
        "design.kind",
        ["expected one of", "'lsh'"],
    ),
    (
        "misspelt fixed template parameter",
        lambda t: t.replace("rtt_ms = [10.0, 30.0]", "rtt = [10.0, 30.0]"),
        "rtt = [10.0, 30.0]",
        "scenario.rtt",
        ["has no parameter 'rtt'", "did you mean 'rtt_ms'"],
    ),
    (
        "template rejects a level: that level is blamed",
        lambda t: t.replace('levels = ["lia", "olia"]', 'levels = ["lia", "olla"]'),
        'levels = ["lia", "olla"]',
        "factors.cc.levels[1]",
        ["rejected cc", "'olla'"],
    ),
    (
        "gap in a list parameter given in [scenario]: the factor past it is blamed",
        lambda t: t.replace('param = "capacity_mbps[1]"', 'param = "rtt_ms[3]"'),
        "[factors.cap1]",
        "factors.cap1",
        ["rtt_ms[2] is not set", "factor 'cap1' sets rtt_ms[3]"],
    ),
    (
        "index past the template's default list",
        lambda t: t.replace('param = "capacity_mbps[1]"', 'param = "capacity_mbps[3]"'),
        "[factors.cap1]",
        "factors.cap1",
        ["capacity_mbps[3] is out of range", "takes 2 values", "indices 0 to 1"],
    ),
    (
        "template rejects a list element: its own factor's domain is blamed on loading",
        lambda t: t.replace(
            'low = 1.0\nhigh = 20.0\nparam = "capacity_mbps[1]"',
            'low = -20.0\nhigh = -1.0\nparam = "capacity_mbps[1]"',
        ),
        "low = -20.0",
        "factors.cap1.low",
        ["rejects capacity_mbps[1] = -20.0 at the low end", "expected a number > 0"],
    ),
    (
        "template rejects a list's length: the factor of its last element is blamed",
        lambda t: t + '\n[factors.rtt2]\nlow = 1.0\nhigh = 2.0\nparam = "rtt_ms[2]"\n',
        "[factors.rtt2]",
        "factors.rtt2",
        ["rejected rtt_ms (", "rtt_ms[2] = ", "expected 2 numbers"],
    ),
    (
        "flow-entry metric written with its placeholder",
        lambda t: t.replace('"goodput_mbps"]', '"user_goodput_mbps.<flow>"]'),
        "metrics = ",
        "metrics[1]",
        ["in place of <flow>", "'user_goodput_mbps.type2'"],
    ),
    (
        "flow-entry metric naming no flow entry of the scenarios",
        lambda t: t.replace('"goodput_mbps"]', '"user_goodput_mbps.type2"]'),
        "metrics = ",
        "metrics[1]",
        ["names flow entry 'type2'", "their flow entries: flow"],
    ),
    (
        "metric that none of the scenarios can give (bulk flows have no block latency)",
        lambda t: t.replace('"goodput_mbps"]', '"block_latency_p95_ms"]'),
        "metrics = ",
        "metrics[1]",
        [
            "metric 'block_latency_p95_ms' needs a flow writing blocks",
            "which none of the campaign's scenarios has",
        ],
    ),
    (
        "flow-entry metric that none of the scenarios can give (nothing leaves, no trace)",
        lambda t: t.replace('"goodput_mbps"]', '"cwnd_recovery_s.flow"]'),
        "metrics = ",
        "metrics[1]",
        ["metric 'cwnd_recovery_s.flow' needs the cwnd trace", "none of the campaign's"],
    ),
    (
        "published figure of an unknown metric",
        _published('metric = "goodput_mbps"', 'metric = "goodput"'),
        'metric = "goodput"',
        "published[0].metric",
        ["unknown metric 'goodput'", "did you mean 'goodput_mbps'"],
    ),
    (
        "published figure at a factor the campaign does not have",
        _published('cc = "lia"', 'ccc = "lia"'),
        "at = { ccc",
        "published[0].at.ccc",
        ["'at' names 'ccc', which is not a factor", "did you mean 'cc'"],
    ),
    (
        "published figure at a level the factor does not have",
        _published('cc = "lia"', 'cc = "balia"'),
        "at = { cc",
        "published[0].at.cc",
        ["factor 'cc' has no level 'balia'", "expected one of: lia, olia"],
    ),
    (
        "published figure outside a quantitative factor's domain",
        _published('cc = "lia"', "cap0 = 50"),
        "at = { cap0",
        "published[0].at.cap0",
        ["50 is outside the domain [1, 20] of factor 'cap0'"],
    ),
    (
        "published figure with a word for a quantitative factor",
        _published('cc = "lia"', 'cap0 = "high"'),
        "at = { cap0",
        "published[0].at.cap0",
        ["factor 'cap0' is quantitative", "got 'high'"],
    ),
    (
        "published figure at no point of the design",
        _published('cc = "lia"', "cap0 = 5"),
        "at = { cap0",
        "published[0].at",
        ["no run of the campaign is at cap0=5", "one of the design's points"],
    ),
    (
        "published ratio over a level the factor does not have",
        _published("value = 5.0", 'value = 5.0\nrelative_to = { cc = "balia" }'),
        "relative_to = { cc",
        "published[0].relative_to.cc",
        ["factor 'cc' has no level 'balia'", "expected one of: lia, olia"],
    ),
    (
        "published ratio over a factor the campaign does not have",
        _published("value = 5.0", 'value = 5.0\nrelative_to = { ccc = "olia" }'),
        "relative_to = { ccc",
        "published[0].relative_to.ccc",
        ["'relative_to' names 'ccc', which is not a factor", "did you mean 'cc'"],
    ),
    (
        "published ratio over its own runs",
        _published("value = 5.0", 'value = 5.0\nrelative_to = { cc = "lia" }'),
        "relative_to = { cc",
        "published[0].relative_to",
        ["names the runs of 'at' again", "needs other settings"],
    ),
    (
        "published ratio over no point of the design",
        _published("value = 5.0", "value = 5.0\nrelative_to = { cap0 = 5 }"),
        "relative_to = { cap0",
        "published[0].relative_to",
        ["no run of the campaign is at cc=lia, cap0=5", "one of the design's points"],
    ),
    (
        "misspelt key of a published figure",
        _published("value = 5.0", "valeu = 5.0"),
        "valeu = 5.0",
        "published[0].valeu",
        ["unknown key 'valeu'", "did you mean 'value'"],
    ),
    (
        "published figure without its source",
        _published('source = "a paper, Table 1"\n', ""),
        "[[published]]",
        "published[0].source",
        ["missing key 'source'"],
    ),
    (
        "published setting of no type a level or a value has: one message, not one per type",
        _published('cc = "lia"', "cc = [1]"),
        "at = { cc",
        "published[0].at.cc",
        ["expected a string (in quotes), an integer, a number or true or false, got [1]"],
    ),
    (
        "levels of neither accepted form: one message, not one per form",
        lambda t: t.replace('levels = ["lia", "olia"]', "levels = 3"),
        "levels = 3",
        "factors.cc.levels",
        ["expected levels as a list of values, or as a table of tables", "got 3"],
    ),
    (
        "published value that is not a finite number",
        _published("value = 5.0", "value = nan"),
        "value = nan",
        "published[0].value",
        ["expected a finite number, got nan"],
    ),
    (
        "published figure with an empty source",
        _published('source = "a paper, Table 1"', 'source = ""'),
        'source = ""',
        "published[0].source",
        ["expected a non-empty string"],
    ),
    (
        "factor named as the design's point numbers",
        lambda t: t.replace("[factors.cap0]", "[factors.point_id]"),
        "[factors.point_id]",
        "factors.point_id",
        ["cannot be named 'point_id'", "the design's point numbers", "rename the factor"],
    ),
    (
        "factor named as a column of every run",
        lambda t: t.replace("[factors.cc]", "[factors.status]"),
        "[factors.status]",
        "factors.status",
        ["cannot be named 'status'", "a column of every run", '`param = "status"`'],
    ),
    (
        "factor named as a metric",
        lambda t: t.replace("[factors.cap1]", "[factors.goodput_mbps]"),
        "[factors.goodput_mbps]",
        "factors.goodput_mbps",
        ["cannot be named 'goodput_mbps'", "which is a metric"],
    ),
    (
        "log scale on a categorical factor",
        lambda t: t.replace('levels = ["lia", "olia"]', 'levels = ["lia", "olia"]\nlog=true'),
        "log=true",
        "factors.cc.log",
        ["'log' is only for quantitative factors"],
    ),
    (
        "two factors on one parameter",
        lambda t: t.replace('param = "capacity_mbps[1]"', 'param = "capacity_mbps[0]"'),
        'param = "capacity_mbps[0]"\n\n[factors.cc]',
        "factors.cap1.param",
        ["already set by factor 'cap0'"],
    ),
]


@pytest.mark.parametrize(
    ("edit", "offending", "key", "words"),
    [case[1:] for case in BAD_FILES],
    ids=[case[0] for case in BAD_FILES],
)
def test_bad_campaign_gives_one_located_message_and_exit_2(
    write_campaign, cli, edit, offending, key, words
) -> None:
    text = edit(SMALL_CAMPAIGN)
    assert text != SMALL_CAMPAIGN, "the edit must change the file"
    path = write_campaign(text)
    if "\n" in offending:  # a line identified by what follows it
        first, _, following = offending.partition("\n")
        expected_line = text[: text.index(offending)].count("\n") + 1
        assert text.splitlines()[expected_line - 1] == first, following
    else:
        expected_line = _line_of(text, offending)

    code, out, err = cli("run", str(path), "-q")

    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    message = lines[0]
    assert f"{path}:{expected_line}: {key}: " in message
    for word in words:
        assert word in message
    assert "Traceback" not in err
    assert not (path.parent / "results").exists(), "nothing may run for a bad campaign"


def test_every_problem_of_a_campaign_file_gets_its_own_line(write_campaign, cli) -> None:
    text = SMALL_CAMPAIGN.replace("replications = 2", 'replications = "two"').replace(
        "points = 3", "points = -3"
    )
    path = write_campaign(text)
    code, out, err = cli("run", str(path), "-q")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"error: {path}:{_line_of(text, 'replications = ')}: replications: expected an "
        "integer, got 'two'",
        f"error: {path}:{_line_of(text, 'points = -3')}: design.points: expected a value ≥ 1, "
        "got -3",
    ]
    # A misspelt required key is one problem: the typo, not also the key it was meant to be.
    text = SMALL_CAMPAIGN.replace('name = "small"', 'nme = "small"')
    code, _, err = cli("run", str(write_campaign(text, "typo.toml")), "-q")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "unknown key 'nme'; did you mean 'name'?" in line


def test_missing_required_key_names_it(write_campaign, cli) -> None:
    path = write_campaign(SMALL_CAMPAIGN.replace('name = "small"\n', ""))
    code, _, err = cli("run", str(path), "-q")
    assert code == 2
    assert f"{path}: name: missing key 'name'" in err


def test_invalid_toml_names_the_line(write_campaign, cli) -> None:
    text = SMALL_CAMPAIGN.replace("replications = 2", "replications = = 2")
    path = write_campaign(text)
    code, _, err = cli("run", str(path), "-q")
    assert code == 2
    assert f"{path}:{_line_of(text, 'replications = = 2')}:" in err
    assert "not valid TOML" in err


def test_missing_campaign_file(cli, tmp_path: Path) -> None:
    code, _, err = cli("run", str(tmp_path / "nope.toml"), "-q")
    assert code == 2
    assert "no campaign file" in err


def test_seed_cannot_be_fixed_in_the_scenario(write_campaign) -> None:
    text = SMALL_CAMPAIGN.replace("duration_s = 1.0", "duration_s = 1.0\nseed = 5")
    with pytest.raises(UserError) as caught:
        load(write_campaign(text))
    assert caught.value.field == "scenario.seed"
    assert caught.value.line == _line_of(text, "seed = 5")


def test_list_elements_no_factor_sets_keep_the_template_defaults(write_campaign) -> None:
    # Factors over path 1's queuing delay and path 0's loss only: path 0's queuing delay and
    # path 1's loss are the template's defaults, as if the lists had been written out.
    text = SMALL_CAMPAIGN + (
        '\n[factors.q1]\nlow = 0.0\nhigh = 50.0\nparam = "queuing_delay_ms[1]"\n'
        '\n[factors.loss0]\nlow = 0.0\nhigh = 0.01\nparam = "loss[0]"\n'
    )
    campaign = load(write_campaign(text))
    defaults = templates.parameters("two_path")
    tasks = build_plan(campaign, backend="sim", backend_version="test").tasks
    assert len(tasks) == 12  # 3 points x 2 levels x 2 replications
    for task in tasks:
        f = task.row.factors
        expected = templates.two_path(
            capacity_mbps=(f["cap0"], f["cap1"]),
            rtt_ms=(10.0, 30.0),
            queuing_delay_ms=(defaults["queuing_delay_ms"][0], f["q1"]),
            loss=(f["loss0"], defaults["loss"][1]),
            cc=task.row.variant["cc"],
            duration_s=1.0,
            seed=task.row.seed,
        )
        assert task.scenario == expected.to_dict()


def test_valid_campaign_loads_with_its_factors_and_targets(write_campaign) -> None:
    campaign = load(write_campaign())
    assert [f.name for f in campaign.quantitative] == ["cap0", "cap1"]
    assert campaign.quantitative[0].log and not campaign.quantitative[1].log
    assert str(campaign.targets["cap0"]) == "capacity_mbps[0]"
    assert [q.name for q in campaign.qualitative] == ["cc"]
    assert list(campaign.qualitative[0].levels) == ["lia", "olia"]
    assert campaign.output == Path("results/small/store.sqlite")
