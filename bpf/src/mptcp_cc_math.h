/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed-point arithmetic of the coupled MPTCP congestion controls LIA, OLIA and BALIA.
 *
 * This header is compiled twice: into the BPF programs (clang -target bpf) and into a host
 * library that the test suite compares against the floating-point formulas. It therefore uses
 * only integer arithmetic on __u64/__s64 and no kernel types.
 *
 * Sources (formulas restated in /work/shared/spec/algorithms.md §2.3-2.5):
 *   LIA   RFC 6356 §3-4 (alpha and the per-ACK increase min(alpha/w_total, 1/w_i)).
 *   OLIA  draft-khalili-mptcp-congestion-control-05 §3-4; loss-interval metric l_r/rtt_r^2 and
 *         ssthresh-in-recovery as in the out-of-tree Linux mptcp_olia.c (spec §2.4, §8 item 4).
 *   BALIA draft-walid-mptcp-congestion-control-04 §2 and §4 (increase and multiplicative
 *         decrease with alpha_r = x_max / x_r), out-of-tree Linux mptcp_balia.c.
 *
 * Why the arithmetic is written the way it is:
 * - Every formula depends on the rates x_j = w_j / rtt_j only through ratios, so the rates are
 *   normalised once (cc_view_build) so that the largest fits in 32 bits. All later products
 *   then stay below 2^63 for windows up to CC_CWND_MAX segments and RTTs up to
 *   CC_SRTT_MAX_US, without 128-bit arithmetic (which the BPF target does not have).
 * - The BPF verifier explores every branch separately; code with data-dependent branches in
 *   the per-path loops multiplies the explored states and can hit its instruction limit.
 *   Comparisons, minima and selections are therefore computed with masks (cc_lt, cc_sel),
 *   and barrier_var() keeps the compiler from turning them back into branches.
 * - Division by zero yields 0 in BPF; cc_div gives the host build the same semantics so both
 *   builds compute identical results.
 */
#ifndef MPTCP_CC_MATH_H
#define MPTCP_CC_MATH_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* The per-path loops stay loops: unrolled, clang keeps too many values live and exceeds the
 * 512-byte BPF stack; the verifier follows the bounded loops itself. */
#ifdef __clang__
#define CC_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define CC_NO_UNROLL
#endif

#ifndef barrier_var
#define barrier_var(var) asm volatile("" : "=r"(var) : "0"(var))
#endif

/* Shared slots per connection (one per subflow). Upstream Linux allows at most 8 additional
 * subflows (net.mptcp limits), so a 9th path entry holds the caller when it found no free slot.
 */
#define CC_MAX_SLOTS 8
#define CC_PATHS (CC_MAX_SLOTS + 1)

/* Windows above 2^20 segments (1.5 GB at 1448 B) and RTTs above 2^26 us (67 s) are clamped:
 * the bounds keep every intermediate product below 2^63. */
#define CC_CWND_MAX (1ULL << 20)
#define CC_SRTT_MAX_US (1ULL << 26)

/* Fixed-point formats: Q16 for ACK-count thresholds, Q24 for shares of the total rate, Q48
 * for OLIA's signed per-ACK increments (fine enough that ceil(1/w) summed over w ACKs makes
 * exactly one segment for every w <= CC_CWND_MAX). */
#define CC_Q16 16
#define CC_Q24 24
#define CC_Q48 48

/* One path as seen by the arithmetic. A path takes part in the aggregates only when it has a
 * window and an RTT sample (srtt_us != 0); the publisher writes srtt_us = 0 for subflows that
 * are not established. */
struct cc_path {
	__u32 tag;           /* nonzero while a subflow owns the slot; ignored by the math */
	__u32 cwnd;          /* segments; ssthresh while in fast recovery (spec §2.1) */
	__u32 srtt_us;       /* smoothed RTT, microseconds; 0 = not in the aggregates */
	__u32 loss_interval; /* OLIA l_r, bytes */
};

/* Normalised rates: x[j] proportional to cwnd_j / srtt_j, the largest below 2^32. */
#define CC_RATE_BITS 32
struct cc_view {
	__u32 x[CC_PATHS];
	__u32 n;    /* number of eligible paths */
	__u64 sum;  /* sum of x[j] over eligible paths, < 2^36 */
	__u64 xmax; /* max of x[j] */
};

/* ---- branch-free primitives ------------------------------------------------------------ */

static __always_inline __u64 cc_div(__u64 a, __u64 b)
{
#ifdef __bpf__
	return a / b; /* BPF defines a / 0 = 0 */
#else
	return b ? a / b : 0;
#endif
}

/* 1 if v != 0, else 0. */
static __always_inline __u64 cc_nz(__u64 v)
{
	/* The barrier hides that this is v != 0, which clang would otherwise lower to a branch. */
	__u64 t = v | (0 - v);

	barrier_var(t);
	return t >> 63;
}

/* 1 if a == b, else 0. */
static __always_inline __u64 cc_eq(__u64 a, __u64 b)
{
	return 1 - cc_nz(a ^ b);
}

/* 1 if a < b, else 0; both operands must be below 2^63. */
static __always_inline __u64 cc_lt(__u64 a, __u64 b)
{
	__u64 t = a - b;

	barrier_var(t);
	return t >> 63;
}

/* bit ? a : b, for bit in {0, 1}. */
static __always_inline __u64 cc_sel(__u64 bit, __u64 a, __u64 b)
{
	__u64 mask = 0 - bit;

	barrier_var(mask);
	return b ^ ((a ^ b) & mask);
}

static __always_inline __u64 cc_min(__u64 a, __u64 b)
{
	return cc_sel(cc_lt(a, b), a, b);
}

static __always_inline __u64 cc_max(__u64 a, __u64 b)
{
	return cc_sel(cc_lt(a, b), b, a);
}

/* Number of significant bits of v (0 for v == 0). */
static __always_inline __u64 cc_bitlen(__u64 v)
{
	__u64 n = 0, s;

	s = cc_nz(v >> 32) << 5;
	v >>= s;
	n += s;
	s = cc_nz(v >> 16) << 4;
	v >>= s;
	n += s;
	s = cc_nz(v >> 8) << 3;
	v >>= s;
	n += s;
	s = cc_nz(v >> 4) << 2;
	v >>= s;
	n += s;
	s = cc_nz(v >> 2) << 1;
	v >>= s;
	n += s;
	s = cc_nz(v >> 1);
	v >>= s;
	n += s;
	return n + cc_nz(v);
}

/* ---- common view ------------------------------------------------------------------------ */

static __always_inline __u64 cc_path_cwnd(const struct cc_path *p)
{
	return cc_min(p->cwnd, CC_CWND_MAX);
}

static __always_inline __u64 cc_path_eligible(const struct cc_path *p)
{
	return cc_nz(p->cwnd) & cc_nz(p->srtt_us);
}

/* Unnormalised rate of an eligible path: cwnd << 40 < 2^61, and >= 2^14 for any eligible
 * path because rtt <= 2^26. 0 for paths outside the aggregates. */
static __always_inline __u64 cc_raw_rate(const struct cc_path *p)
{
	__u64 rtt = cc_min(p->srtt_us, CC_SRTT_MAX_US);

	return cc_sel(cc_path_eligible(p), cc_div(cc_path_cwnd(p) << 40, rtt), 0);
}

static __always_inline void cc_view_build(const struct cc_path *p, struct cc_view *v)
{
	__u64 xmax = 0, n = 0, sum = 0, shift;
	int j;

	/* Two passes (the raw rates are recomputed) keep the view small: BPF has 512 B of stack. */
	CC_NO_UNROLL
	for (j = 0; j < CC_PATHS; j++) {
		xmax = cc_max(xmax, cc_raw_rate(&p[j]));
		n += cc_path_eligible(&p[j]);
	}
	shift = cc_bitlen(xmax);
	shift = cc_sel(cc_lt(CC_RATE_BITS, shift), shift - CC_RATE_BITS, 0);
	CC_NO_UNROLL
	for (j = 0; j < CC_PATHS; j++) {
		__u64 x = cc_raw_rate(&p[j]) >> shift;

		v->x[j] = x;
		sum += x;
	}
	v->sum = sum;
	v->xmax = xmax >> shift;
	v->n = n;
}

/* Sum of the eligible windows (segments). */
static __always_inline __u64 cc_total_cwnd(const struct cc_path *p)
{
	__u64 total = 0;
	int j;

	CC_NO_UNROLL
	for (j = 0; j < CC_PATHS; j++)
		total += cc_sel(cc_path_eligible(&p[j]), cc_path_cwnd(&p[j]), 0);
	return total;
}

/* ---- LIA (RFC 6356) ----------------------------------------------------------------------
 *
 * Per ACK the window of path i grows by min(alpha / w_total, 1 / w_i) segments, with
 * alpha = w_total * max_j(w_j / rtt_j^2) / (sum_j w_j / rtt_j)^2. Counting ACKs against a
 * threshold (RFC 6356 §4.2, Linux "coupled") needs the reciprocal
 *     w_total / alpha = (sum_j x_j)^2 / max_j(w_j / rtt_j^2) = min_j w_j * (sum x / x_j)^2,
 * using w_j / rtt_j^2 = x_j^2 / w_j. The minimum form needs no argmax and no rtt^2.
 * The minimising path j* has w_j* (sum x / x_j*)^2 <= n^2 w_k for the fastest path k (whose
 * ratio is at most n), so its ratio is at most n sqrt(w_k) < 2^14 for w <= 2^20, n <= 9.
 * Ratios above 2^14, and products that would pass 2^63, are therefore skipped: they cannot
 * be the minimum.
 */

/* w_total / alpha in Q16; returns 0 when no path is eligible. */
static __always_inline __u64 cc_lia_total_over_alpha_q16(const struct cc_path *p,
							 const struct cc_view *v)
{
	const __u64 none = 1ULL << 62;
	const __u64 q_cap = 1ULL << (CC_Q16 + 14);
	__u64 best = none;
	int j;

	CC_NO_UNROLL
	for (j = 0; j < CC_PATHS; j++) {
		__u64 q = cc_div(v->sum << CC_Q16, v->x[j]); /* (sum x / x_j) in Q16, < 2^53 */
		__u64 ok = cc_nz(v->x[j]) & cc_lt(q, q_cap + 1);
		__u64 a, hi, t;

		q = cc_min(q, q_cap);
		/* t = w_j q^2 / 2^16 (Q16) computed as (w_j q) * q / 2^16 in two halves. */
		a = cc_path_cwnd(&p[j]) * q; /* < 2^50 */
		hi = a >> CC_Q16;
		ok &= cc_lt(hi, 1ULL << 33); /* then hi * q < 2^63 */
		t = hi * q + (((a & ((1ULL << CC_Q16) - 1)) * q) >> CC_Q16);
		best = cc_min(best, cc_sel(ok, t, none));
	}
	return cc_sel(cc_lt(best, none), best, 0);
}

/* ACKs per one-segment increase of path `self_cwnd` (Q16): max(w_total / alpha, w_i).
 * With one eligible path this is exactly w_i, i.e. Reno. */
static __always_inline __u64 cc_lia_threshold_q16(const struct cc_path *p, const struct cc_view *v,
						  __u64 self_cwnd)
{
	__u64 t = cc_lia_total_over_alpha_q16(p, v);
	__u64 own = cc_max(cc_min(self_cwnd, CC_CWND_MAX), 1) << CC_Q16;

	return cc_max(t, own);
}

/* ACK counting toward a Q16 threshold (LIA, BALIA; RFC 6356 §4.2 packet-counting form): adds
 * `units` (ACKs, or segments when counting per segment) to the Q16 count and returns the whole
 * segments earned, as the kernel's tcp_cong_avoid_ai() does with snd_cwnd_cnt: the remainder
 * is kept, so fractional thresholds lose nothing and a threshold of exactly cwnd is Reno; and
 * a count already at the threshold when the ACK arrives (earned toward a larger threshold, as
 * when another subflow's window falls and LIA's or BALIA's threshold with it) buys one segment
 * and restarts from zero, rather than several segments at once. */
static __always_inline __u64 cc_count_step(__u64 *count_q16, __u64 threshold_q16, __u64 units)
{
	__u64 stale = cc_nz(threshold_q16) & (1 - cc_lt(*count_q16, threshold_q16));
	__u64 count = cc_sel(stale, 0, *count_q16) + (units << CC_Q16);
	__u64 delta = cc_div(count, threshold_q16);

	*count_q16 = count - delta * threshold_q16;
	return stale + delta;
}

/* Linux tcp_is_cwnd_limited() (include/net/tcp.h, since "tcp: fix cwnd_limited bug for TSO
 * deferral where we send nothing", 2023): a subflow may grow its window when the window
 * limited its sending in this round, or, in slow start, until the window is twice the most
 * that was in flight. Only subflows that use their window grow it (spec §2.8 f). */
static __always_inline __u64 cc_cwnd_limited(__u64 is_cwnd_limited, __u64 cwnd, __u64 ssthresh,
					     __u64 max_packets_out)
{
	__u64 slow_start = cc_lt(cwnd, ssthresh);

	return cc_nz(is_cwnd_limited) | (slow_start & cc_lt(cwnd, 2 * max_packets_out));
}

/* OLIA's window step from its signed Q48 accumulator, which the caller has just added the
 * ACK's increase to. Per ACK (Linux mptcp_olia.c) one segment is taken once the accumulator
 * reaches one either way, and the rest is dropped. Per acknowledged segment (the draft's
 * w_r += inc * segments) every whole segment is taken and the rest kept, as cc_count_step does
 * for LIA and BALIA, so that an ACK covering many segments grows the window as they would one
 * by one. Returns the step in segments (negative: a decrease); *acc_q48 keeps what is left. */
static __always_inline __s64 cc_olia_step(__s64 *acc_q48, __u64 per_segment)
{
	__s64 acc = *acc_q48;
	__u64 mag = acc < 0 ? (__u64)(-acc) : (__u64)acc;
	__u64 whole = mag >> CC_Q48;
	__s64 left = (__s64)(mag - (whole << CC_Q48));

	if (!per_segment) {
		if (!whole)
			return 0;
		*acc_q48 = 0;
		return acc < 0 ? -1 : 1;
	}
	*acc_q48 = acc < 0 ? -left : left;
	return acc < 0 ? -(__s64)whole : (__s64)whole;
}

/* ---- OLIA (draft-khalili-mptcp-congestion-control-05) ------------------------------------
 *
 * Per ACK on path r: w_r += w_r / (rtt_r^2 (sum_p w_p / rtt_p)^2) + eps_r / w_r, where
 * eps_r = +1/(n |C|) on the collected paths C = best \ M, -1/(n |M|) on the paths M with the
 * largest window when C is not empty, else 0; best = argmax l_r / rtt_r^2 (ties included).
 * The first term equals (x_r / sum x)^2 / w_r, which is scale-free.
 */

/* hi * 2^32 + lo = a * b, for a < 2^32 and b < 2^52 (so hi < 2^53): the exact products the
 * best-path comparison needs exceed 64 bits, and the BPF target has no 128-bit arithmetic. */
static __always_inline void cc_mul_wide(__u64 a, __u64 b, __u64 *hi, __u64 *lo)
{
	__u64 low = a * (b & 0xffffffffULL);

	*hi = a * (b >> 32) + (low >> 32);
	*lo = low & 0xffffffffULL;
}

/* lt = (a * b < c * d), eq = (a * b == c * d), exactly, for a, c < 2^32 and b, d < 2^52. */
static __always_inline void cc_cmp_products(__u64 a, __u64 b, __u64 c, __u64 d, __u64 *lt,
					    __u64 *eq)
{
	__u64 h1, l1, h2, l2;

	cc_mul_wide(a, b, &h1, &l1);
	cc_mul_wide(c, d, &h2, &l2);
	*lt = cc_lt(h1, h2) | (cc_eq(h1, h2) & cc_lt(l1, l2));
	*eq = cc_eq(h1, h2) & cc_eq(l1, l2);
}

/* rtt^2 of a path in us^2, below 2^52 (rtt clamped to CC_SRTT_MAX_US). */
static __always_inline __u64 cc_rtt_squared(const struct cc_path *p)
{
	__u64 rtt = cc_min(p->srtt_us, CC_SRTT_MAX_US);

	return rtt * rtt;
}

struct cc_olia_terms {
	__s64 inc_q48;  /* per-ACK window change of path `self`, segments in Q48 */
	__s64 eps_num;  /* -1, 0 or +1 */
	__u64 eps_den;  /* n * |C| or n * |M| (1 when eps_num == 0) */
};

static __always_inline void cc_olia_terms(const struct cc_path *p, const struct cc_view *v,
					  __u64 self, struct cc_olia_terms *out)
{
	/* The best metric l/rtt^2 is kept as the fraction best_l / best_r2 and compared by
	 * cross-multiplication, as mptcp_olia.c does: a rounded quotient would make near-ties
	 * (at long RTTs and short loss intervals) ties. */
	__u64 wmax = 0, best_l = 0, best_r2 = 1, n_m = 0, n_c = 0;
	__u64 self_m = 0, self_c = 0, self_x = 0, self_w = 1;
	__u64 f, term1, term2, den, in_c_set, in_m_set, w, lt, eq;
	int j;

	CC_NO_UNROLL
	for (j = 0; j < CC_PATHS; j++) {
		__u64 ok = cc_path_eligible(&p[j]);
		__u64 l = p[j].loss_interval, r2 = cc_rtt_squared(&p[j]);

		wmax = cc_max(wmax, cc_sel(ok, cc_path_cwnd(&p[j]), 0));
		/* best_l / best_r2 < l / r2 */
		cc_cmp_products(best_l, r2, l, best_r2, &lt, &eq);
		lt &= ok;
		best_l = cc_sel(lt, l, best_l);
		best_r2 = cc_sel(lt, r2, best_r2);
	}
	CC_NO_UNROLL
	for (j = 0; j < CC_PATHS; j++) {
		__u64 ok = cc_path_eligible(&p[j]);
		__u64 is_self = cc_eq(j, self);

		cc_cmp_products(p[j].loss_interval, best_r2, best_l, cc_rtt_squared(&p[j]), &lt,
				&eq);
		in_m_set = ok & cc_eq(cc_path_cwnd(&p[j]), wmax);
		in_c_set = ok & eq & (in_m_set ^ 1);
		n_m += in_m_set;
		n_c += in_c_set;
		self_m |= in_m_set & is_self;
		self_c |= in_c_set & is_self;
		self_x = cc_sel(is_self, v->x[j], self_x);
		self_w = cc_sel(is_self, cc_max(cc_path_cwnd(&p[j]), 1), self_w);
	}
	w = self_w;
	/* (x_r / sum x)^2 in Q48 divided by w_r, rounded up so that a single path needs exactly
	 * w ACKs per increase, like Reno. The share f is taken in Q28 (f^2 < 2^56). */
	f = cc_div(self_x << 28, v->sum);
	term1 = cc_div(((f * f) >> (56 - CC_Q48)) + w - 1, w);

	in_c_set = cc_nz(n_c) & self_c;
	in_m_set = cc_nz(n_c) & self_m;
	den = cc_sel(in_c_set, v->n * n_c, cc_sel(in_m_set, v->n * n_m, 1));
	term2 = cc_div(1ULL << CC_Q48, den * w);
	out->eps_num = (__s64)in_c_set - (__s64)in_m_set;
	out->eps_den = den;
	out->inc_q48 = (__s64)term1 + out->eps_num * (__s64)term2;
}

/* ---- BALIA (draft-walid-mptcp-congestion-control-04) -------------------------------------
 *
 * Per ACK on path r: w_r += (x_r + x_max)(4 x_r + x_max) / (10 w_r (sum x)^2); the ACK-count
 * threshold is its reciprocal. On loss: w_r -= (w_r / 2) min(alpha_r, 1.5), alpha_r = x_max/x_r.
 * With shares a = x_r / sum x and m = x_max / sum x (Q24) the threshold is
 * 10 w_r / ((a + m)(4a + m)), which is exactly w_r for a single path (a = m = 1).
 */
static __always_inline __u64 cc_balia_threshold_q16(const struct cc_view *v, __u64 self_x,
						    __u64 self_cwnd)
{
	__u64 w = cc_max(cc_min(self_cwnd, CC_CWND_MAX), 1);
	__u64 a = cc_div(self_x << CC_Q24, v->sum);
	__u64 m = cc_div(v->xmax << CC_Q24, v->sum);
	/* (a + m)(4a + m) < 2^25 * 5 * 2^24 in Q48; keep 20 fractional bits (>= 2^14 here). */
	__u64 prod = ((a + m) * (4 * a + m)) >> 28;
	__u64 ai = cc_div((10 * w) << (CC_Q16 + 20), prod);

	return cc_sel(cc_nz(ai), ai, w << CC_Q16);
}

/* min(alpha_r, 1.5) in Q16; 1.5 when the own rate is unknown. */
static __always_inline __u64 cc_balia_md_factor_q16(const struct cc_view *v, __u64 self_x)
{
	const __u64 cap = 3ULL << (CC_Q16 - 1);
	__u64 alpha = cc_div(v->xmax << CC_Q16, self_x);

	return cc_sel(cc_nz(self_x), cc_min(alpha, cap), cap);
}

/* BALIA ssthresh after a congestion event: max(w - (w/2) min(alpha, 1.5), 1) (draft §2). */
static __always_inline __u64 cc_balia_ssthresh(const struct cc_view *v, __u64 self_x, __u64 cwnd)
{
	__u64 md = (cwnd * cc_balia_md_factor_q16(v, self_x)) >> (CC_Q16 + 1);

	return cc_max(cwnd - cc_min(md, cwnd), 1);
}

/* The normalised rate of path `self`. */
static __always_inline __u64 cc_self_x(const struct cc_view *v, __u64 self)
{
	__u64 x = 0;
	int j;

	CC_NO_UNROLL
	for (j = 0; j < CC_PATHS; j++)
		x = cc_sel(cc_eq(j, self), v->x[j], x);
	return x;
}

#endif /* MPTCP_CC_MATH_H */
