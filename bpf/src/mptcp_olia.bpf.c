// SPDX-License-Identifier: GPL-2.0
/*
 * mptcp_olia: Opportunistic Linked Increases for MPTCP subflows as a BPF tcp_congestion_ops.
 *
 * draft-khalili-mptcp-congestion-control-05 §3-4 (spec §2.4): the congestion-avoidance
 * increase w_r/(rtt_r^2 (sum w_p/rtt_p)^2) + eps_r/w_r per ACK (or per acknowledged segment),
 * accumulated in a signed counter that adds or removes segments (cc_olia_step); loss intervals kept as snd_una marks updated once
 * per congestion episode, as in the out-of-tree Linux mptcp_olia.c. Fast recovery and the
 * decrease are Reno's; the minimum ssthresh with >= 2 paths is configurable (2 by default,
 * like Linux; the draft says 1). A plain TCP socket runs the kernel's Reno unchanged.
 */
#define CC_CONN_MAP olia_conns
#define CC_CFG_MAP olia_cfg
#include "mptcp_cc_shared.bpf.h"

CC_COMMON_CALLBACKS(olia)

/* Bounds inc * acked below 2^63 in per-segment counting (inc <= 2^48). */
#define OLIA_MAX_ACKED_PER_STEP 4096

SEC("struct_ops/olia_cong_avoid")
void BPF_PROG(olia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_priv *ca = cc_priv(sk);
	struct cc_olia_terms terms;
	struct cc_snapshot snap;
	struct cc_view view;
	struct cc_config cfg;
	__u64 room, down;
	__s64 acc, step;

	if (!tp->is_mptcp) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	ca->loss3 = tp->snd_una;
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
	cc_olia_terms(snap.path, &view, snap.self, &terms);
	if (acked > OLIA_MAX_ACKED_PER_STEP)
		acked = OLIA_MAX_ACKED_PER_STEP;
	acc = ca->acc_q48 + terms.inc_q48 * (cfg.count_per_segment ? (__s64)acked : 1);
	step = cc_olia_step(&acc, cfg.count_per_segment);
	if (step > 0) {
		room = tp->snd_cwnd_clamp > tp->snd_cwnd ? tp->snd_cwnd_clamp - tp->snd_cwnd : 0;
		tp->snd_cwnd = tp->snd_cwnd + ((__u64)step < room ? (__u32)step : (__u32)room);
	} else if (step < 0) {
		down = (__u64)(-step);
		tp->snd_cwnd = tp->snd_cwnd > down ? tp->snd_cwnd - (__u32)down : 1;
	}
	ca->acc_q48 = acc;
}

SEC("struct_ops/olia_ssthresh")
__u32 BPF_PROG(olia_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_priv *ca = cc_priv(sk);
	struct cc_snapshot snap;
	struct cc_view view;
	struct cc_config cfg;
	__u32 floor = 2;
	__u32 half;

	if (!tp->is_mptcp)
		return tcp_reno_ssthresh(sk);
	cc_load_config(&cfg);
	cc_refresh(sk, ca, cc_ca_state(sk), &cfg, &snap);
	cc_view_build(snap.path, &view);
	if (view.n >= 2 && cfg.olia_min_ssthresh == 1)
		floor = 1;
	half = tp->snd_cwnd >> 1;
	return half > floor ? half : floor;
}

SEC("struct_ops/olia_set_state")
void BPF_PROG(olia_set_state, struct sock *sk, __u8 new_state)
{
	struct cc_priv *ca = cc_priv(sk);

	if (!cc_tcp_sk(sk)->is_mptcp)
		return;
	/* One loss interval per congestion episode; not while RTO retransmissions are pending. */
	if ((new_state == TCP_CA_LOSS || new_state == TCP_CA_RECOVERY || new_state == TCP_CA_CWR) &&
	    ca->loss3 != ca->loss2 && !((struct inet_connection_sock *)sk)->icsk_retransmits) {
		ca->loss1 = ca->loss2;
		ca->loss2 = ca->loss3;
	}
	cc_set_state_common(sk, new_state);
}

CC_OPS(olia);
