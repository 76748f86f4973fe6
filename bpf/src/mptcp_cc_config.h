/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run-time options of the coupled congestion controls (spec §2.8), shared by the BPF programs
 * and the loader, which writes them into the algorithm's config map before registering it.
 */
#ifndef MPTCP_CC_CONFIG_H
#define MPTCP_CC_CONFIG_H

struct cc_config {
	/* 0: one increase step per ACK, as the Linux modules count (delayed ACKs halve growth);
	 * 1: one step per newly acknowledged segment, as RFC 6356 and the drafts scale it. */
	__u32 count_per_segment;
	/* 1: a subflow in fast recovery contributes ssthresh instead of its inflated cwnd to the
	 * aggregates (Linux OLIA, spec §2.1); 0: its cwnd. */
	__u32 ssthresh_in_recovery;
	/* OLIA minimum ssthresh in segments when >= 2 paths are active: 2 (Linux) or 1 (draft §3). */
	__u32 olia_min_ssthresh;
	__u32 reserved;
};

#define CC_CONFIG_DEFAULTS { .count_per_segment = 0, .ssthresh_in_recovery = 1, \
			     .olia_min_ssthresh = 2, .reserved = 0 }

#endif /* MPTCP_CC_CONFIG_H */
