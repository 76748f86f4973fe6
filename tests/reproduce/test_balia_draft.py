"""The simulator against the conclusions draft-walid-mptcp-congestion-control-04 §5.1 draws
from its Table 1 (Khalili's Scenario A at C1 = C2 = 10 Mbit/s, N2 = 5): upgrading the type-1
users to MPTCP with LIA costs the type-2 users (19 % at N1 = 5, 25 % at N1 = 15) without
benefit to the type-1 users, and OLIA and BALIA are both friendlier than LIA to the type-2
users. The draft's own figures are in campaigns/reproduce-balia-a.toml."""

from __future__ import annotations

import statistics

import pytest

from mptcplab import sim
from mptcplab.scenario.templates import make

LINK_MBPS = 10.0
N2 = 5


def _groups(n1: int, column: str) -> tuple[float, float]:
    """Aggregate goodput of the type-1 and type-2 users, mean of two seeds."""
    variant = {"multipath": False} if column == "single-path" else {"cc": column}
    totals = []
    for seed in (1, 2):
        report = sim.run(
            make(
                "shared_ap",
                n1=n1,
                n2=N2,
                c1_mbps=LINK_MBPS / n1,
                c2_mbps=LINK_MBPS / N2,
                rtt_ms=110.0,
                seed=seed,
                **variant,
            )
        )
        totals.append(
            [
                sum(f.goodput_mbps for f in report.flows if f.id.split("#")[0] == group)
                for group in ("type1", "type2")
            ]
        )
    return statistics.mean(t[0] for t in totals), statistics.mean(t[1] for t in totals)


@pytest.fixture(scope="module")
def table() -> dict[tuple[int, str], tuple[float, float]]:
    found = {
        (n1, column): _groups(n1, column)
        for n1 in (5, 15)
        for column in ("single-path", "lia", "olia", "balia")
    }
    print("\nN1  column        type-1  type-2  (aggregate Mbit/s)")
    for (n1, column), (t1, t2) in found.items():
        print(f"{n1:>2}  {column:12}  {t1:6.2f}  {t2:6.2f}")
    return found


@pytest.mark.parametrize("n1", [5, 15])
def test_lia_costs_the_type2_users_without_benefit_to_the_type1_users(table, n1) -> None:
    single, lia = table[(n1, "single-path")], table[(n1, "lia")]
    assert lia[1] < 0.9 * single[1]
    assert lia[0] < 1.05 * single[0]


@pytest.mark.parametrize("n1", [5, 15])
@pytest.mark.parametrize("cc", ["olia", "balia"])
def test_olia_and_balia_leave_the_type2_users_more_than_lia(table, n1, cc) -> None:
    assert table[(n1, cc)][1] > table[(n1, "lia")][1]
