/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State shared by the subflows of one MPTCP connection, for the coupled congestion controls.
 *
 * Upstream Linux gives a BPF tcp_congestion_ops no way to walk the sibling subflows (the MPTCP
 * kfuncs and bpf_skc_to_mptcp_sock are rejected in these callbacks and the msk pointer is
 * untrusted), so every subflow publishes what the coupled formulas need about it -- window,
 * smoothed RTT, OLIA loss interval -- into one slot of a hash-map entry keyed by the MPTCP
 * connection token, and reads its siblings' slots from there (spec §2.1). The token is read
 * from the subflow context (icsk_ulp_data) through bpf_rdonly_cast.
 *
 * The including file defines CC_CONN_MAP and CC_CFG_MAP (map names, unique per algorithm so
 * that the loader can find them) before including this header.
 */
#ifndef MPTCP_CC_SHARED_BPF_H
#define MPTCP_CC_SHARED_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "mptcp_cc_math.h"
#include "mptcp_cc_config.h"

char _license[] SEC("license") = "GPL";

#define TCP_CA_OPEN 0
#define TCP_CA_CWR 2
#define TCP_CA_RECOVERY 3
#define TCP_CA_LOSS 4
#define TCP_STATE_ESTABLISHED 1
#define TCP_STATE_CLOSE_WAIT 8

/* Kernel Reno pieces, exported to tcp_congestion_ops programs as kfuncs: a plain TCP socket
 * runs them unchanged, so it behaves exactly like the kernel's "reno". */
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* One connection: a slot per subflow, guarded by the spin lock. */
struct cc_conn {
	struct bpf_spin_lock lock;
	/* Set, under the lock, by the last subflow to leave, which then deletes the entry: a
	 * subflow that looked the entry up before the deletion must not publish into it. */
	__u32 closed;
	struct cc_path slot[CC_MAX_SLOTS];
};

/* Not preallocated: a deleted entry is freed only after the programs that may still hold it
 * have returned, so its memory cannot become another connection's entry under them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32); /* MPTCP connection token (local side) */
	__type(value, struct cc_conn);
} CC_CONN_MAP SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cc_config);
} CC_CFG_MAP SEC(".maps");

/* Private per-subflow state in icsk_ca_priv (104 bytes available). */
struct cc_priv {
	__u32 token;     /* 0 until known; always 0 for plain TCP */
	__u32 tag;       /* random nonzero value marking the slot this subflow owns */
	__u32 slot;      /* index of that slot (checked against the tag before use) */
	__u32 reserved0;
	__u64 count_q16; /* LIA/BALIA: ACKs (or segments) counted toward the next increase, Q16 */
	__s64 acc_q48;   /* OLIA: signed increase accumulator, segments in Q48 */
	__u32 loss1;     /* OLIA: snd_una at the last-but-one loss event */
	__u32 loss2;     /* OLIA: snd_una at the last loss event */
	__u32 loss3;     /* OLIA: snd_una at the latest ACK */
	__u32 reserved;
};

_Static_assert(sizeof(struct cc_priv) <= 13 * sizeof(__u64), "cc_priv exceeds icsk_ca_priv");

/* Everything the per-ACK code needs after publishing: the connection's paths and our index. */
struct cc_snapshot {
	struct cc_path path[CC_PATHS];
	__u64 self;
};

static __always_inline struct tcp_sock *cc_tcp_sk(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct cc_priv *cc_priv(struct sock *sk)
{
	return (struct cc_priv *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline void cc_load_config(struct cc_config *cfg)
{
	const struct cc_config defaults = CC_CONFIG_DEFAULTS;
	__u32 zero = 0;
	const struct cc_config *stored = bpf_map_lookup_elem(&CC_CFG_MAP, &zero);

	*cfg = defaults;
	if (stored)
		*cfg = *stored;
}

static __always_inline __u32 cc_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

static __always_inline __u32 cc_is_cwnd_limited(const struct tcp_sock *tp)
{
	return cc_cwnd_limited(BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited), tp->snd_cwnd,
			       tp->snd_ssthresh, tp->max_packets_out);
}

/* MPTCP connection token of a subflow, 0 for plain TCP or when not yet known. */
static __always_inline __u32 cc_read_token(struct sock *sk)
{
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	struct mptcp_subflow_context *ctx;
	void *ulp;

	if (!cc_tcp_sk(sk)->is_mptcp)
		return 0;
	ulp = icsk->icsk_ulp_data;
	if (!ulp)
		return 0;
	ctx = bpf_rdonly_cast(ulp, bpf_core_type_id_kernel(struct mptcp_subflow_context));
	return ctx->token;
}

static __always_inline __u32 cc_is_multipath(struct sock *sk, struct cc_priv *ca)
{
	/* Before init the socket is left alone: a SYN sent again calls ssthresh and set_state
	 * first, and a connection that never opens is never released (tcp_cleanup_congestion_
	 * control skips a socket whose control was not initialised), so an entry published now
	 * would stay in the map for good. Init publishes through cc_publish itself. */
	if (!BPF_CORE_READ_BITFIELD((struct inet_connection_sock *)sk, icsk_ca_initialized))
		return 0;
	if (!ca->token)
		ca->token = cc_read_token(sk);
	return ca->token != 0;
}

/* What this subflow contributes to the aggregates right now. `ca_state` is passed explicitly
 * because set_state runs before icsk_ca_state changes. */
static __always_inline void cc_own_path(struct sock *sk, struct cc_priv *ca, __u32 ca_state,
					const struct cc_config *cfg, struct cc_path *out)
{
	struct tcp_sock *tp = cc_tcp_sk(sk);
	__u32 state = sk->__sk_common.skc_state;
	__u32 srtt = tp->srtt_us >> 3;
	__u32 l_new = ca->loss3 - ca->loss2;
	__u32 l_old = ca->loss2 - ca->loss1;

	if (tp->srtt_us && !srtt)
		srtt = 1;
	/* Linux counts a subflow in the aggregates only while it can send (established or
	 * close-wait) and has an RTT sample. */
	if (state != TCP_STATE_ESTABLISHED && state != TCP_STATE_CLOSE_WAIT)
		srtt = 0;
	out->tag = ca->tag;
	out->cwnd = tp->snd_cwnd;
	if (ca_state == TCP_CA_RECOVERY && cfg->ssthresh_in_recovery)
		out->cwnd = tp->snd_ssthresh;
	out->srtt_us = srtt;
	out->loss_interval = l_new > l_old ? l_new : l_old;
}

/* Initial value of a connection entry (all slots free). A byte array, not a struct cc_conn:
 * global data must not contain a bpf_spin_lock, and a zeroed struct on the stack would cost
 * a quarter of the 512-byte BPF stack. */
const volatile __u8 cc_conn_zero[sizeof(struct cc_conn)];

static __always_inline struct cc_conn *cc_conn_get(__u32 token)
{
	struct cc_conn *conn = bpf_map_lookup_elem(&CC_CONN_MAP, &token);

	if (conn)
		return conn;
	/* Another subflow may create it concurrently: BPF_NOEXIST, then look up again. */
	bpf_map_update_elem(&CC_CONN_MAP, &token, (const void *)cc_conn_zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&CC_CONN_MAP, &token);
}

/* Writes our path into our slot (claiming a free one first if needed) and copies all slots
 * into `snap`. Without a free slot the caller is still counted, as path CC_MAX_SLOTS.
 * Returns 0 when the connection entry cannot be had (map full); `snap` then holds only us. */
static __always_inline int cc_publish(struct cc_priv *ca, const struct cc_path *own,
				      struct cc_snapshot *snap)
{
	struct cc_conn *conn;
	__u64 mine, owned, free_idx;
	int i;

	snap->path[CC_MAX_SLOTS] = *own;
	snap->self = CC_MAX_SLOTS;
	conn = cc_conn_get(ca->token);
	if (!conn) {
		CC_NO_UNROLL
		for (i = 0; i < CC_MAX_SLOTS; i++)
			snap->path[i].srtt_us = 0;
		return 0;
	}

	bpf_spin_lock(&conn->lock);
	mine = ca->slot & (CC_MAX_SLOTS - 1);
	owned = 0;
	free_idx = CC_MAX_SLOTS;
	CC_NO_UNROLL
	for (i = CC_MAX_SLOTS - 1; i >= 0; i--) {
		__u64 here = cc_eq(i, mine);

		owned |= here & cc_eq(conn->slot[i].tag, ca->tag);
		free_idx = cc_sel(cc_eq(conn->slot[i].tag, 0), i, free_idx);
	}
	/* Keep our slot, else take the lowest free one, else none (index CC_MAX_SLOTS); none
	 * in a closed entry, whose slots are all free (the next publish makes a new entry). */
	mine = cc_sel(owned, mine, free_idx);
	mine = cc_sel(cc_nz(conn->closed), CC_MAX_SLOTS, mine);
	owned = cc_lt(mine, CC_MAX_SLOTS);
	CC_NO_UNROLL
	for (i = 0; i < CC_MAX_SLOTS; i++) {
		__u64 here = cc_eq(i, mine);

		conn->slot[i].tag = cc_sel(here, own->tag, conn->slot[i].tag);
		conn->slot[i].cwnd = cc_sel(here, own->cwnd, conn->slot[i].cwnd);
		conn->slot[i].srtt_us = cc_sel(here, own->srtt_us, conn->slot[i].srtt_us);
		conn->slot[i].loss_interval =
			cc_sel(here, own->loss_interval, conn->slot[i].loss_interval);
		snap->path[i] = conn->slot[i];
	}
	bpf_spin_unlock(&conn->lock);

	ca->slot = mine;
	/* When we own a slot, path CC_MAX_SLOTS must not count us twice. */
	snap->path[CC_MAX_SLOTS].srtt_us = cc_sel(owned, 0, own->srtt_us);
	snap->self = mine;
	return 1;
}

/* Publishes this subflow and fills `snap`; for a single-path socket only itself. */
static __always_inline void cc_refresh(struct sock *sk, struct cc_priv *ca, __u32 ca_state,
				       const struct cc_config *cfg, struct cc_snapshot *snap)
{
	struct cc_path own;
	int i;

	cc_own_path(sk, ca, ca_state, cfg, &own);
	if (cc_is_multipath(sk, ca)) {
		cc_publish(ca, &own, snap);
		return;
	}
	snap->path[CC_MAX_SLOTS] = own;
	snap->self = CC_MAX_SLOTS;
	CC_NO_UNROLL
	for (i = 0; i < CC_MAX_SLOTS; i++)
		snap->path[i].srtt_us = 0;
}

static __always_inline __u32 cc_ca_state(struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD((struct inet_connection_sock *)sk, icsk_ca_state);
}

static __always_inline void cc_init_common(struct sock *sk)
{
	struct cc_priv *ca = cc_priv(sk);
	struct tcp_sock *tp = cc_tcp_sk(sk);
	struct cc_snapshot snap;

	ca->token = cc_read_token(sk);
	ca->tag = bpf_get_prandom_u32() | 1;
	ca->slot = 0;
	ca->count_q16 = 0;
	ca->acc_q48 = 0;
	ca->loss1 = tp->snd_una;
	ca->loss2 = tp->snd_una;
	ca->loss3 = tp->snd_una;
	if (ca->token) {
		struct cc_config cfg;
		struct cc_path own;

		/* Not cc_refresh: icsk_ca_initialized is set only once init returns. */
		cc_load_config(&cfg);
		cc_own_path(sk, ca, cc_ca_state(sk), &cfg, &own);
		cc_publish(ca, &own, &snap);
	}
}

/* Frees our slot; the last subflow of a connection removes the entry, so nothing outlives it. */
static __always_inline void cc_release_common(struct sock *sk)
{
	struct cc_priv *ca = cc_priv(sk);
	struct cc_conn *conn;
	__u32 token = ca->token;
	__u64 mine, used = 0;
	int i;

	if (!token)
		return;
	conn = bpf_map_lookup_elem(&CC_CONN_MAP, &token);
	if (!conn)
		return;
	bpf_spin_lock(&conn->lock);
	mine = ca->slot & (CC_MAX_SLOTS - 1);
	CC_NO_UNROLL
	for (i = 0; i < CC_MAX_SLOTS; i++) {
		__u64 ours = cc_eq(i, mine) & cc_eq(conn->slot[i].tag, ca->tag);

		conn->slot[i].tag = cc_sel(ours, 0, conn->slot[i].tag);
		conn->slot[i].cwnd = cc_sel(ours, 0, conn->slot[i].cwnd);
		conn->slot[i].srtt_us = cc_sel(ours, 0, conn->slot[i].srtt_us);
		conn->slot[i].loss_interval = cc_sel(ours, 0, conn->slot[i].loss_interval);
		used += cc_nz(conn->slot[i].tag);
	}
	conn->closed |= 1 - cc_nz(used);
	bpf_spin_unlock(&conn->lock);
	if (!used)
		bpf_map_delete_elem(&CC_CONN_MAP, &token);
	ca->token = 0;
}

/* Alone on its connection (fewer than two paths in the aggregates), a subflow runs Reno
 * exactly, as the simulator does: RFC 6356 §3 makes the one-path increase Reno's, and Reno
 * counts the segments each ACK covers. The coupled step, counted per ACK (the default, as the
 * out-of-tree modules count), would grow half as fast under delayed ACKs. Asked once the
 * window is known to be limiting (tcp_reno_cong_avoid tests the same again): a window the
 * sender does not fill needs no view of the paths. */
static __always_inline bool cc_alone(const struct cc_view *v)
{
	return v->n < 2;
}

/* One congestion-avoidance step of LIA and BALIA: count this ACK toward the threshold and
 * grow cwnd by the segments earned, up to the clamp. */
static __always_inline void cc_count_and_increase(struct tcp_sock *tp, struct cc_priv *ca,
						  __u64 threshold_q16, __u32 acked,
						  const struct cc_config *cfg)
{
	__u64 count = ca->count_q16;
	__u64 delta = cc_count_step(&count, threshold_q16, cfg->count_per_segment ? acked : 1);
	__u64 room = tp->snd_cwnd_clamp > tp->snd_cwnd ? tp->snd_cwnd_clamp - tp->snd_cwnd : 0;

	ca->count_q16 = count;
	tp->snd_cwnd = tp->snd_cwnd + (delta < room ? delta : room);
}

/* A state change: refresh this subflow's published path (used by every algorithm's set_state;
 * OLIA first shifts its loss marks).
 * A window reduction (CWR, Recovery, Loss) also drops the ACKs counted toward LIA's and BALIA's
 * next increase. Linux zeroes snd_cwnd_cnt when a reduction starts (tcp_init_cwnd_reduction,
 * tcp_enter_loss), and the out-of-tree mptcp_coupled.c and mptcp_balia.c count in snd_cwnd_cnt;
 * our counter lives in cc_priv, and left alone, the credit earned toward the larger window's
 * threshold would buy several segments at once from the reduced window's smaller threshold as
 * soon as congestion avoidance resumes. */
static __always_inline void cc_set_state_common(struct sock *sk, __u8 new_state)
{
	struct cc_snapshot snap;
	struct cc_config cfg;

	if (new_state == TCP_CA_CWR || new_state == TCP_CA_RECOVERY || new_state == TCP_CA_LOSS)
		cc_priv(sk)->count_q16 = 0;
	cc_load_config(&cfg);
	cc_refresh(sk, cc_priv(sk), new_state, &cfg, &snap);
}

/* The callbacks every algorithm `p` shares — per-socket state set up and released, Reno's
 * undo — and its tcp_congestion_ops table, which names p_cong_avoid, p_ssthresh and
 * p_set_state, written by the algorithm itself. */
#define CC_COMMON_CALLBACKS(p)                                                                    \
	SEC("struct_ops/" #p "_init")                                                            \
	void BPF_PROG(p##_init, struct sock *sk)                                                  \
	{                                                                                         \
		cc_init_common(sk);                                                               \
	}                                                                                         \
	SEC("struct_ops/" #p "_release")                                                         \
	void BPF_PROG(p##_release, struct sock *sk)                                               \
	{                                                                                         \
		cc_release_common(sk);                                                            \
	}                                                                                         \
	SEC("struct_ops/" #p "_undo_cwnd")                                                       \
	__u32 BPF_PROG(p##_undo_cwnd, struct sock *sk)                                            \
	{                                                                                         \
		return tcp_reno_undo_cwnd(sk);                                                    \
	}

#define CC_OPS(p)                                                                                 \
	SEC(".struct_ops")                                                                        \
	struct tcp_congestion_ops mptcp_##p = {                                                   \
		.init = (void *)p##_init,                                                         \
		.release = (void *)p##_release,                                                   \
		.cong_avoid = (void *)p##_cong_avoid,                                             \
		.ssthresh = (void *)p##_ssthresh,                                                 \
		.set_state = (void *)p##_set_state,                                               \
		.undo_cwnd = (void *)p##_undo_cwnd,                                               \
		.name = "mptcp_" #p,                                                              \
	}

#endif /* MPTCP_CC_SHARED_BPF_H */
