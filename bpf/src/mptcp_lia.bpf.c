// SPDX-License-Identifier: GPL-2.0
/*
 * mptcp_lia: Linked Increases Algorithm for MPTCP subflows as a BPF tcp_congestion_ops.
 *
 * RFC 6356 §3-4 (spec §2.3): only the congestion-avoidance increase is coupled,
 * min(alpha / cwnd_total, 1 / cwnd_i) per ACK, counted like the out-of-tree Linux
 * mptcp_coupled.c (one step per ACK by default). Slow start, fast recovery and the
 * multiplicative decrease are Reno's. A plain TCP socket runs the kernel's Reno unchanged.
 */
#define CC_CONN_MAP lia_conns
#define CC_CFG_MAP lia_cfg
#include "mptcp_cc_shared.bpf.h"

CC_COMMON_CALLBACKS(lia)

SEC("struct_ops/lia_cong_avoid")
void BPF_PROG(lia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_priv *ca = cc_priv(sk);
	struct cc_snapshot snap;
	struct cc_view view;
	struct cc_config cfg;

	if (!tp->is_mptcp) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	cc_load_config(&cfg);
	cc_refresh(sk, ca, cc_ca_state(sk), &cfg, &snap);
	if (!cc_is_cwnd_limited(tp))
		return;
	cc_view_build(snap.path, &view);
	if (cc_alone(&view)) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (cc_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	cc_count_and_increase(tp, ca, cc_lia_threshold_q16(snap.path, &view, tp->snd_cwnd), acked,
			      &cfg);
}

SEC("struct_ops/lia_ssthresh")
__u32 BPF_PROG(lia_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/lia_set_state")
void BPF_PROG(lia_set_state, struct sock *sk, __u8 new_state)
{
	if (cc_tcp_sk(sk)->is_mptcp)
		cc_set_state_common(sk, new_state);
}

CC_OPS(lia);
