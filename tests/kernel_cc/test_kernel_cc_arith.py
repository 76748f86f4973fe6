"""The fixed-point arithmetic run by the BPF congestion controls, against the real-valued
formulas of spec §2.3-2.5 (RFC 6356, draft-khalili-...-05, draft-walid-...-04) and the fluid
fixed points of spec §6.2.

The arithmetic header bpf/src/mptcp_cc_math.h is compiled here into a host library with the
ordinary C compiler, so the very code the kernel runs is what is checked. The float oracles
below are written from the spec formulas, not from that code.
"""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
MATH_HEADER = REPO / "bpf" / "src" / "mptcp_cc_math.h"
LIB_SOURCE = REPO / "bpf" / "host" / "cc_math_lib.c"
N_PATHS = 9
Q16 = 1 << 16
Q48 = 1 << 48
REL_TOL = 0.01


class Path_(ctypes.Structure):
    _fields_ = (
        ("tag", ctypes.c_uint32),
        ("cwnd", ctypes.c_uint32),
        ("srtt_us", ctypes.c_uint32),
        ("loss_interval", ctypes.c_uint32),
    )


PathArray = Path_ * N_PATHS


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("no C compiler to build the host copy of the fixed-point arithmetic")
    out = tmp_path_factory.mktemp("ccmath") / "libccmath.so"
    proc = subprocess.run(
        [compiler, "-O2", "-Wall", "-Werror", "-shared", "-fPIC", str(LIB_SOURCE), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    so = ctypes.CDLL(str(out))
    so.cc_math_paths.restype = ctypes.c_int
    for fn in (
        "cc_math_lia_total_over_alpha_q16",
        "cc_math_total_cwnd",
        "cc_math_lia_threshold_q16",
        "cc_math_balia_threshold_q16",
        "cc_math_balia_ssthresh",
        "cc_math_count_step",
        "cc_math_cwnd_limited",
    ):
        getattr(so, fn).restype = ctypes.c_uint64
    so.cc_math_olia_increment_q48.restype = ctypes.c_int64
    # Without argtypes ctypes passes a Python int as a C int: a threshold above 2^31 would
    # arrive truncated.
    so.cc_math_count_step.argtypes = [
        ctypes.POINTER(ctypes.c_uint64),
        ctypes.c_uint64,
        ctypes.c_uint64,
    ]
    so.cc_math_cwnd_limited.argtypes = [ctypes.c_uint64] * 4
    so.cc_math_olia_step.restype = ctypes.c_int64
    so.cc_math_olia_step.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.c_uint64]
    assert so.cc_math_paths() == N_PATHS
    return so


Paths = list[tuple[int, int, int]]  # (cwnd segments, srtt us, loss interval bytes)


def _array(paths: Paths) -> PathArray:
    arr = PathArray()
    for i, (cwnd, srtt, loss) in enumerate(paths):
        arr[i] = Path_(tag=i + 1, cwnd=cwnd, srtt_us=srtt, loss_interval=loss)
    return arr


def _eligible(paths: Paths) -> list[int]:
    return [i for i, (w, r, _) in enumerate(paths) if w > 0 and r > 0]


# ---- float oracles (spec §2.3-2.5) ---------------------------------------------------------


def lia_alpha(paths: Paths) -> float:
    """RFC 6356: alpha = W * max(w/rtt^2) / (sum w/rtt)^2."""
    act = [(w, r / 1e6) for i, (w, r, _) in enumerate(paths) if i in _eligible(paths)]
    total = sum(w for w, _ in act)
    return total * max(w / r**2 for w, r in act) / sum(w / r for w, r in act) ** 2


def lia_increase(paths: Paths, i: int) -> float:
    """RFC 6356 per-ACK increase in segments: min(alpha / W, 1 / w_i)."""
    total = sum(paths[j][0] for j in _eligible(paths))
    return min(lia_alpha(paths) / total, 1.0 / paths[i][0])


def olia_eps(paths: Paths, i: int) -> Fraction:
    """draft-khalili-05 §3 epsilon_r with exact rationals (ties are exact)."""
    act = _eligible(paths)
    n = len(act)
    metric = {j: Fraction(paths[j][2], paths[j][1] ** 2) for j in act}
    best = {j for j in act if metric[j] == max(metric.values())}
    wmax = max(paths[j][0] for j in act)
    max_w = {j for j in act if paths[j][0] == wmax}
    collected = best - max_w
    if not collected:
        return Fraction(0)
    if i in collected:
        return Fraction(1, n * len(collected))
    if i in max_w:
        return Fraction(-1, n * len(max_w))
    return Fraction(0)


def olia_terms(paths: Paths, i: int) -> tuple[float, float]:
    """The two OLIA increase terms: w_r/(rtt_r^2 (sum w_p/rtt_p)^2) and eps_r / w_r."""
    act = _eligible(paths)
    w, r = paths[i][0], paths[i][1] / 1e6
    rate_sum = sum(paths[j][0] / (paths[j][1] / 1e6) for j in act)
    return w / (r**2 * rate_sum**2), float(olia_eps(paths, i)) / w


def balia_increase(paths: Paths, i: int) -> float:
    """draft-walid-04 §2: (x_r + x_max)(4 x_r + x_max) / (10 w_r (sum x)^2)."""
    x = {j: paths[j][0] / (paths[j][1] / 1e6) for j in _eligible(paths)}
    xr, xmax, xsum = x[i], max(x.values()), sum(x.values())
    return (xr + xmax) * (4 * xr + xmax) / (10 * paths[i][0] * xsum**2)


def balia_ssthresh(paths: Paths, i: int) -> float:
    """draft-walid-04 §2: max(w - (w/2) min(x_max/x_r, 1.5), 1)."""
    x = {j: paths[j][0] / (paths[j][1] / 1e6) for j in _eligible(paths)}
    w = paths[i][0]
    return max(w - w / 2 * min(max(x.values()) / x[i], 1.5), 1.0)


# ---- fixed-point results -------------------------------------------------------------------


def fixed_alpha(lib: ctypes.CDLL, paths: Paths) -> float:
    arr = _array(paths)
    return lib.cc_math_total_cwnd(arr) / (lib.cc_math_lia_total_over_alpha_q16(arr) / Q16)


def fixed_lia_increase(lib: ctypes.CDLL, paths: Paths, i: int) -> float:
    return Q16 / lib.cc_math_lia_threshold_q16(_array(paths), i)


def fixed_olia(lib: ctypes.CDLL, paths: Paths, i: int) -> tuple[float, Fraction]:
    num, den = ctypes.c_int64(), ctypes.c_uint64()
    inc = lib.cc_math_olia_increment_q48(_array(paths), i, ctypes.byref(num), ctypes.byref(den))
    return inc / Q48, Fraction(num.value, den.value)


def fixed_balia_increase(lib: ctypes.CDLL, paths: Paths, i: int) -> float:
    return Q16 / lib.cc_math_balia_threshold_q16(_array(paths), i)


# ---- spec §6.2 worked values ---------------------------------------------------------------

# (windows in segments, RTTs in s, alpha): RFC 6356 fixed points worked in spec §6.2. Windows
# are scaled by 1000 to integers; alpha does not depend on the unit of the windows.
LIA_WORKED = [
    ((9.428, 4.714), (0.1, 0.1), 0.667),
    ((12.856, 12.856), (0.01, 0.1), 1.653),
    ((44.721, 5.198), (0.1, 0.02), 1.297),
    ((18.824, 4.706), (0.05, 0.2), 1.107),
]


def _scaled(windows: tuple[float, ...], rtts: tuple[float, ...], scale: int) -> Paths:
    return [(round(w * scale), round(r * 1e6), 0) for w, r in zip(windows, rtts, strict=True)]


@pytest.mark.parametrize(("windows", "rtts", "alpha"), LIA_WORKED)
def test_lia_alpha_matches_rfc6356_worked_values(
    lib: ctypes.CDLL, windows: tuple[float, ...], rtts: tuple[float, ...], alpha: float
) -> None:
    paths = _scaled(windows, rtts, 1000)
    assert fixed_alpha(lib, paths) == pytest.approx(alpha, rel=REL_TOL)
    assert fixed_alpha(lib, paths) == pytest.approx(lia_alpha(paths), rel=REL_TOL)


@pytest.mark.parametrize(("windows", "rtts", "alpha"), LIA_WORKED)
def test_lia_increase_balances_loss_at_the_rfc6356_fixed_point(
    lib: ctypes.CDLL, windows: tuple[float, ...], rtts: tuple[float, ...], alpha: float
) -> None:
    """At a fixed point the per-ACK increase equals the expected per-ACK decrease p_i w_i / 2
    on every path that is not capped at TCP's window (spec §6.2; p from the same table)."""
    losses = {0.667: (0.01, 0.02), 1.653: (0.01, 0.01), 1.297: (0.001, 0.01), 1.107: (0.005, 0.02)}
    scale = 100
    paths = _scaled(windows, rtts, scale)
    for i, p in enumerate(losses[alpha]):
        if windows[i] >= math.sqrt(2 / p) * 0.999:
            continue  # capped at the TCP window: increase 1/w_i, not the coupled term
        inc = fixed_lia_increase(lib, paths, i) * scale  # back to unscaled segments
        assert inc == pytest.approx(p * windows[i] / 2, rel=0.02)


def test_balia_increase_balances_loss_at_the_draft_fixed_point(lib: ctypes.CDLL) -> None:
    """Spec §6.2 BALIA fixed point p = (0.01, 0.02), rtt = 0.1 s: w = (10.76, 3.38). There
    each path's per-ACK increase equals p_r (w_r / 2) min(alpha_r, 1.5)."""
    windows, rtts, losses = (10.76, 3.38), (0.1, 0.1), (0.01, 0.02)
    scale = 100
    paths = _scaled(windows, rtts, scale)
    rates = [w / r for w, r in zip(windows, rtts, strict=True)]
    for i, p in enumerate(losses):
        alpha = max(rates) / rates[i]
        inc = fixed_balia_increase(lib, paths, i) * scale
        assert inc == pytest.approx(p * windows[i] / 2 * min(alpha, 1.5), rel=0.02)


# ---- single path: Reno ---------------------------------------------------------------------


@given(
    cwnd=st.integers(1, 1 << 20),
    srtt=st.integers(1, 1 << 26),
    loss=st.integers(0, (1 << 32) - 1),
    slot=st.integers(0, N_PATHS - 1),
)
@settings(max_examples=300, deadline=None)
def test_single_path_is_exactly_reno(
    lib: ctypes.CDLL, cwnd: int, srtt: int, loss: int, slot: int
) -> None:
    """With one path alpha = 1 and every algorithm needs exactly cwnd ACKs per segment."""
    paths: Paths = [(0, 0, 0)] * N_PATHS
    paths[slot] = (cwnd, srtt, loss)
    arr = _array(paths)
    assert lib.cc_math_lia_threshold_q16(arr, slot) == cwnd * Q16
    assert lib.cc_math_balia_threshold_q16(arr, slot) == cwnd * Q16
    num, den = ctypes.c_int64(), ctypes.c_uint64()
    inc = lib.cc_math_olia_increment_q48(arr, slot, ctypes.byref(num), ctypes.byref(den))
    assert num.value == 0
    assert cwnd * inc >= Q48 > (cwnd - 1) * inc


def _count(lib: ctypes.CDLL, threshold_q16: int, units: list[int]) -> list[int]:
    """Segments earned after each ACK when counting `units` per ACK toward the threshold."""
    count = ctypes.c_uint64(0)
    return [lib.cc_math_count_step(ctypes.byref(count), threshold_q16, u) for u in units]


@given(cwnd=st.integers(1, 5000), srtt=st.integers(1, 1 << 26))
@settings(max_examples=100, deadline=None)
def test_single_path_counting_adds_one_segment_every_cwnd_acks(
    lib: ctypes.CDLL, cwnd: int, srtt: int
) -> None:
    """Reno's congestion avoidance: one segment per cwnd ACKs (RFC 5681 §3.1)."""
    paths: Paths = [(cwnd, srtt, 0)] + [(0, 0, 0)] * (N_PATHS - 1)
    for threshold in (
        lib.cc_math_lia_threshold_q16(_array(paths), 0),
        lib.cc_math_balia_threshold_q16(_array(paths), 0),
    ):
        earned = _count(lib, threshold, [1] * (3 * cwnd))
        assert [k + 1 for k, d in enumerate(earned) if d] == [cwnd, 2 * cwnd, 3 * cwnd]
        assert sum(earned) == 3


@given(
    threshold_q16=st.integers(Q16, 1 << 40),
    units=st.lists(st.integers(1, 64), min_size=1, max_size=200),
)
@settings(max_examples=200, deadline=None)
def test_counting_keeps_the_remainder(
    lib: ctypes.CDLL, threshold_q16: int, units: list[int]
) -> None:
    """Per-segment counting (RFC 6356 scales by bytes acked): after any sequence of ACKs the
    segments earned are exactly floor(total / threshold), nothing is lost to rounding."""
    earned = _count(lib, threshold_q16, units)
    assert sum(earned) == (sum(units) * Q16) // threshold_q16


def _cong_avoid_ai(count: int, threshold: int, units: int) -> tuple[int, int]:
    """Linux's tcp_cong_avoid_ai() (net/ipv4/tcp_cong.c) on snd_cwnd_cnt, with the count and the
    threshold (its `w`) in Q16: (new count, segments earned)."""
    earned = 0
    if count >= threshold:
        # "If credits accumulated at a higher w, apply them gently now."
        count, earned = 0, 1
    whole, count = divmod(count + units * Q16, threshold)
    return count, earned + whole


@given(
    steps=st.lists(
        st.tuples(st.integers(Q16, 1 << 40), st.integers(1, 64)), min_size=1, max_size=200
    )
)
@settings(max_examples=200, deadline=None)
def test_counting_follows_tcp_cong_avoid_ai_when_the_threshold_moves(
    lib: ctypes.CDLL, steps: list[tuple[int, int]]
) -> None:
    """LIA's and BALIA's thresholds move with the other subflows' windows between ACKs; the
    count keeps to the kernel's own rule for Reno's counter, ACK by ACK."""
    count, model = ctypes.c_uint64(0), 0
    for threshold_q16, units in steps:
        earned = lib.cc_math_count_step(ctypes.byref(count), threshold_q16, units)
        model, want = _cong_avoid_ai(model, threshold_q16, units)
        assert (earned, count.value) == (want, model), (threshold_q16, units)


@given(
    increase_q48=st.integers(-(1 << 48), 1 << 48),
    acked=st.lists(st.integers(1, 64), min_size=1, max_size=200),
)
@settings(max_examples=200, deadline=None)
def test_olia_per_segment_steps_follow_the_drafts_sum(
    lib: ctypes.CDLL, increase_q48: int, acked: list[int]
) -> None:
    """Per acknowledged segment, draft-khalili-05 §3 moves the window by inc for each one: over
    any run of ACKs the segments taken are the whole part of inc times their sum (toward zero),
    however many each ACK covers. Taking one segment at most and dropping the rest made a
    64 KB stretch ACK (44 segments) grow the window half as fast as its segments would."""
    acc, taken = ctypes.c_int64(0), 0
    for n in acked:
        acc.value += increase_q48 * n
        taken += lib.cc_math_olia_step(ctypes.byref(acc), 1)
    total = Fraction(increase_q48 * sum(acked), Q48)
    assert taken == math.trunc(total)
    assert Fraction(acc.value, Q48) == total - taken


def test_olia_per_ack_steps_as_linux_does(lib: ctypes.CDLL) -> None:
    """mptcp_olia.c: one segment once the counter reaches one either way, then from zero."""
    acc = ctypes.c_int64(int(2.5 * Q48))
    assert lib.cc_math_olia_step(ctypes.byref(acc), 0) == 1 and acc.value == 0
    acc = ctypes.c_int64(-int(1.5 * Q48))
    assert lib.cc_math_olia_step(ctypes.byref(acc), 0) == -1 and acc.value == 0
    acc = ctypes.c_int64(Q48 - 1)
    assert lib.cc_math_olia_step(ctypes.byref(acc), 0) == 0 and acc.value == Q48 - 1


def test_credit_toward_a_larger_threshold_buys_one_segment(lib: ctypes.CDLL) -> None:
    """44 ACKs toward a threshold of 49 (a 2-segment subflow beside a 45-segment one under LIA),
    then the other subflow's window falls to 10 and the threshold to 14.4: the next ACK earns
    one segment, not the three that 45 ACKs over 14.4 would make."""
    count = ctypes.c_uint64(0)
    assert sum(lib.cc_math_count_step(ctypes.byref(count), 49 * Q16, 1) for _ in range(44)) == 0
    assert lib.cc_math_count_step(ctypes.byref(count), int(14.4 * Q16), 1) == 1
    assert count.value == Q16


# ---- random connections against the float formulas -----------------------------------------

path_strategy = st.tuples(
    st.integers(1, 200_000),  # cwnd, segments
    st.integers(20, 3_000_000),  # srtt, us
    st.integers(0, (1 << 32) - 1),  # loss interval, bytes
)


@st.composite
def connections(draw: st.DrawFn) -> tuple[Paths, int]:
    """Up to 9 slots, some active, some free or without RTT sample, and one index to update."""
    paths: Paths = []
    for _ in range(N_PATHS):
        kind = draw(st.sampled_from(["active", "active", "free", "no_rtt"]))
        if kind == "active":
            paths.append(draw(path_strategy))
        elif kind == "no_rtt":
            paths.append((draw(st.integers(1, 1000)), 0, 0))
        else:
            paths.append((0, 0, 0))
    act = _eligible(paths)
    assume(act)
    return paths, draw(st.sampled_from(act))


@given(connections())
@settings(max_examples=400, deadline=None)
def test_lia_matches_rfc6356(lib: ctypes.CDLL, case: tuple[Paths, int]) -> None:
    paths, i = case
    assert fixed_alpha(lib, paths) == pytest.approx(lia_alpha(paths), rel=REL_TOL)
    assert fixed_lia_increase(lib, paths, i) == pytest.approx(lia_increase(paths, i), rel=REL_TOL)


@given(connections())
@example(
    # A decrease of exactly 18 segments (w = 33, x_max/x = 12/11): see the ssthresh bound below.
    case=(
        [
            (33, 36, 0),
            (1, 0, 0),
            (1, 20, 0),
            (21, 21, 0),
            (1, 0, 0),
            *[(0, 0, 0)] * 2,
            (1, 0, 0),
            (0, 0, 0),
        ],
        0,
    )
)
@settings(max_examples=400, deadline=None)
def test_balia_matches_draft(lib: ctypes.CDLL, case: tuple[Paths, int]) -> None:
    paths, i = case
    assert fixed_balia_increase(lib, paths, i) == pytest.approx(
        balia_increase(paths, i), rel=REL_TOL
    )
    got = lib.cc_math_balia_ssthresh(_array(paths), i)
    want = balia_ssthresh(paths, i)
    # The kernel floors the decrease (w/2)·factor in whole segments, with the factor truncated
    # to Q16: up to one segment plus w·2^-17 above the draft's value. A bound of exactly one
    # failed where the decrease is a whole number (w = 33, factor 12/11: 15 against 16).
    assert abs(got - want) <= max(1.0 + paths[i][0] / 2**17, REL_TOL * want)


@given(connections())
@settings(max_examples=400, deadline=None)
def test_olia_matches_draft(lib: ctypes.CDLL, case: tuple[Paths, int]) -> None:
    paths, i = case
    got, eps = fixed_olia(lib, paths, i)
    assert eps == olia_eps(paths, i)
    first, second = olia_terms(paths, i)
    # The terms can cancel on max-window paths, so the tolerance is relative to their size;
    # errors below 2^-32 segment per ACK (one segment in four billion ACKs) do not count.
    tol = REL_TOL * (abs(first) + abs(second)) + 2.0**-32
    assert abs(got - (first + second)) <= tol


@pytest.mark.parametrize("rtt_us", [1_000, 1_000_000, 60_000_000])
@pytest.mark.parametrize("excess", [1, 29])
def test_olia_best_path_near_ties_are_not_ties(lib: ctypes.CDLL, rtt_us: int, excess: int) -> None:
    """At equal RTTs the path with the larger window has a loss interval a few bytes longer,
    so it alone is the best path: C = best \\ M is empty and every ε is 0. A rounded l/rtt²
    (4 significant bits at 1 s and ten segments) took the two as tied and moved 1/2 segment
    per window to the smaller path."""
    paths: Paths = [(40, rtt_us, 14_480 + excess), (20, rtt_us, 14_480)]
    paths += [(0, 0, 0)] * (N_PATHS - len(paths))
    for i in (0, 1):
        assert olia_eps(paths, i) == 0
        assert fixed_olia(lib, paths, i)[1] == 0


@pytest.mark.parametrize(
    ("is_limited", "cwnd", "ssthresh", "max_out", "want"),
    [
        (1, 40, 100, 20, 1),  # slow start, limited in this round (TSO deferral): grows
        (0, 40, 100, 20, 0),  # slow start, already twice the most in flight
        (0, 39, 100, 20, 1),  # slow start, below twice the most in flight
        (1, 100, 50, 10, 1),  # congestion avoidance, limited
        (0, 100, 50, 60, 0),  # congestion avoidance, not limited: 2·max_out does not count
    ],
)
def test_cwnd_limited_follows_tcp_is_cwnd_limited(
    lib: ctypes.CDLL, is_limited: int, cwnd: int, ssthresh: int, max_out: int, want: int
) -> None:
    assert lib.cc_math_cwnd_limited(is_limited, cwnd, ssthresh, max_out) == want


@given(
    st.lists(st.integers(1, 50), min_size=2, max_size=N_PATHS),
    st.integers(1000, 200_000),
)
@settings(max_examples=200, deadline=None)
def test_olia_ties_in_loss_interval_follow_the_draft(
    lib: ctypes.CDLL, windows: list[int], rtt_us: int
) -> None:
    """Equal RTTs and equal loss intervals make every path a best path: the paths with the
    largest window give up 1/(n |M|) and the others share +1/(n |C|) (spec §2.4)."""
    paths: Paths = [(w, rtt_us, 1_000_000) for w in windows]
    paths += [(0, 0, 0)] * (N_PATHS - len(paths))
    n = len(windows)
    n_max = windows.count(max(windows))
    for i, w in enumerate(windows):
        _, eps = fixed_olia(lib, paths, i)
        if n_max == n:
            assert eps == 0
        elif w == max(windows):
            assert eps == Fraction(-1, n * n_max)
        else:
            assert eps == Fraction(1, n * (n - n_max))
