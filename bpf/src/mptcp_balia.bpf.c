// SPDX-License-Identifier: GPL-2.0
/*
 * mptcp_balia: Balanced Linked Adaptation for MPTCP subflows as a BPF tcp_congestion_ops.
 *
 * draft-walid-mptcp-congestion-control-04 §2 and §4 (spec §2.5): per ACK in congestion
 * avoidance w_r += (x_r + x_max)(4 x_r + x_max) / (10 w_r (sum x)^2), counted against the
 * reciprocal threshold as in the out-of-tree Linux mptcp_balia.c; on a congestion event
 * ssthresh = max(w_r - (w_r/2) min(alpha_r, 1.5), 1) with alpha_r = x_max / x_r when >= 2
 * paths are active, Reno otherwise. A plain TCP socket runs the kernel's Reno unchanged.
 */
#define CC_CONN_MAP balia_conns
#define CC_CFG_MAP balia_cfg
#include "mptcp_cc_shared.bpf.h"

CC_COMMON_CALLBACKS(balia)

SEC("struct_ops/balia_cong_avoid")
void BPF_PROG(balia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_priv *ca = cc_priv(sk);
	struct cc_snapshot snap;
	struct cc_view view;
	struct cc_config cfg;
	__u64 threshold;

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
	threshold = cc_balia_threshold_q16(&view, cc_self_x(&view, snap.self), tp->snd_cwnd);
	cc_count_and_increase(tp, ca, threshold, acked, &cfg);
}

SEC("struct_ops/balia_ssthresh")
__u32 BPF_PROG(balia_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_priv *ca = cc_priv(sk);
	struct cc_snapshot snap;
	struct cc_view view;
	struct cc_config cfg;
	__u32 half;

	if (!tp->is_mptcp)
		return tcp_reno_ssthresh(sk);
	cc_load_config(&cfg);
	cc_refresh(sk, ca, cc_ca_state(sk), &cfg, &snap);
	cc_view_build(snap.path, &view);
	if (view.n >= 2)
		return cc_balia_ssthresh(&view, cc_self_x(&view, snap.self), tp->snd_cwnd);
	half = tp->snd_cwnd >> 1;
	return half > 2 ? half : 2;
}

SEC("struct_ops/balia_set_state")
void BPF_PROG(balia_set_state, struct sock *sk, __u8 new_state)
{
	if (cc_tcp_sk(sk)->is_mptcp)
		cc_set_state_common(sk, new_state);
}

CC_OPS(balia);
