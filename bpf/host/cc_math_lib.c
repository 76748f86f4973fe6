// SPDX-License-Identifier: GPL-2.0
/*
 * Host build of the fixed-point arithmetic in ../src/mptcp_cc_math.h, exported for the test
 * suite (loaded with ctypes) so it can compare the very code the BPF programs run with the
 * floating-point formulas of RFC 6356 and the OLIA/BALIA drafts. Each entry point takes the
 * CC_PATHS path records the BPF code sees and the index of the path whose update is wanted.
 */
#include "../src/mptcp_cc_math.h"

int cc_math_paths(void)
{
	return CC_PATHS;
}

unsigned long long cc_math_lia_total_over_alpha_q16(const struct cc_path *p)
{
	struct cc_view v;

	cc_view_build(p, &v);
	return cc_lia_total_over_alpha_q16(p, &v);
}

unsigned long long cc_math_lia_threshold_q16(const struct cc_path *p, unsigned int self)
{
	struct cc_view v;

	cc_view_build(p, &v);
	return cc_lia_threshold_q16(p, &v, p[self].cwnd);
}

unsigned long long cc_math_total_cwnd(const struct cc_path *p)
{
	return cc_total_cwnd(p);
}

long long cc_math_olia_increment_q48(const struct cc_path *p, unsigned int self,
				     long long *eps_num, unsigned long long *eps_den)
{
	struct cc_olia_terms t;
	struct cc_view v;

	cc_view_build(p, &v);
	cc_olia_terms(p, &v, self, &t);
	*eps_num = t.eps_num;
	*eps_den = t.eps_den;
	return t.inc_q48;
}

unsigned long long cc_math_balia_threshold_q16(const struct cc_path *p, unsigned int self)
{
	struct cc_view v;

	cc_view_build(p, &v);
	return cc_balia_threshold_q16(&v, cc_self_x(&v, self), p[self].cwnd);
}

unsigned long long cc_math_balia_ssthresh(const struct cc_path *p, unsigned int self)
{
	struct cc_view v;

	cc_view_build(p, &v);
	return cc_balia_ssthresh(&v, cc_self_x(&v, self), p[self].cwnd);
}

unsigned long long cc_math_count_step(unsigned long long *count_q16,
				      unsigned long long threshold_q16, unsigned long long units)
{
	__u64 count = *count_q16;
	__u64 delta = cc_count_step(&count, threshold_q16, units);

	*count_q16 = count;
	return delta;
}

unsigned long long cc_math_cwnd_limited(unsigned long long is_cwnd_limited,
					unsigned long long cwnd, unsigned long long ssthresh,
					unsigned long long max_packets_out)
{
	return cc_cwnd_limited(is_cwnd_limited, cwnd, ssthresh, max_packets_out);
}

long long cc_math_olia_step(long long *acc_q48, unsigned long long per_segment)
{
	__s64 acc = *acc_q48;
	__s64 step = cc_olia_step(&acc, per_segment);

	*acc_q48 = acc;
	return step;
}
