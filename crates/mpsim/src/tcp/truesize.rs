//! What Linux charges a TCP socket for the data it queues (`sk_wmem_queued`, which the send
//! buffer bounds): every skb's truesize, its payload plus the skb's own memory. A writer's data
//! waits in skbs built to the largest GSO size (`tcp_xmit_size_goal`); transmission cuts them
//! into TSO packets of about a millisecond of the pacing rate (`tcp_write_xmit` →
//! `tso_fragment`, sized by `tcp_tso_autosize`, at least `tcp_min_tso_segs` = 2), each a new
//! skb. So data sent and not yet acknowledged costs more than its payload on a slow path (two
//! segments per skb: 1.44×) and little more on a fast one. Sources: Linux 6.18
//! `net/ipv4/tcp_output.c` (`tcp_tso_autosize`, `tso_fragment`), `net/ipv4/tcp.c`
//! (`tcp_stream_alloc_skb`, `tcp_xmit_size_goal`), `include/linux/skbuff.h` (`SKB_TRUESIZE`).

/// The truesize of an skb before payload: `alloc_skb_fclone(MAX_TCP_HEADER)` rounds its head
/// (320 bytes of headers and 320 of `skb_shared_info`) up to a 1 KiB slab, so SKB_TRUESIZE(704)
/// = 704 + 256 (`struct sk_buff`) + 320 = 1280 bytes.
pub const SKB_OVERHEAD_BYTES: u64 = 1280;

/// `tcp_xmit_size_goal`: 64 KiB less headers, 45 segments of 1448 bytes.
const SIZE_GOAL_SEGMENTS: u64 = 45;

/// `sk_gso_max_size` on the emulator's devices (and any of a 64 KiB GSO limit): 65 536 less
/// MAX_TCP_HEADER + 1 (`sk_dst_gso_max_size`).
const GSO_MAX_BYTES: u64 = 65_536 - 321;

/// `tcp_xmit_size_goal`: the payload a writer puts in one skb, whole segments of the GSO
/// limit bounded to half the largest window the peer has advertised
/// (`tcp_bound_to_half_wnd`), one segment at least.
pub fn size_goal(max_window: u64, mss: u32) -> u64 {
    let mss = mss as u64;
    let cutoff = if max_window > 536 {
        max_window / 2
    } else {
        max_window
    };
    let bound = if cutoff == 0 {
        GSO_MAX_BYTES
    } else {
        GSO_MAX_BYTES.min(cutoff)
    };
    (bound / mss).clamp(1, SIZE_GOAL_SEGMENTS) * mss
}

/// `tcp_min_tso_segs`.
const MIN_TSO_SEGMENTS: u64 = 2;

/// `tcp_tso_autosize`: segments per TSO packet, the bytes the pacing rate (bytes/s) sends in
/// 2^-10 s (`sk_pacing_shift`), at least `tcp_min_tso_segs`, at most a size goal. (Its
/// extra allowance for short RTTs, 64 KiB >> (min_rtt_us >> 9), is nil above 8 ms.)
pub fn tso_segments(pacing_rate: f64, mss: u32) -> u64 {
    let segments = (pacing_rate / 1024.0 / mss as f64) as u64;
    segments.clamp(MIN_TSO_SEGMENTS, SIZE_GOAL_SEGMENTS)
}

/// `sk_wmem_queued` for `unsent` bytes waiting in size-goal skbs and `in_flight` bytes sent
/// in TSO packets of [`tso_segments`] segments.
pub fn wmem_queued(unsent: u64, in_flight: u64, mss: u32, pacing_rate: f64) -> u64 {
    let skbs = |bytes: u64, segments: u64| bytes.div_ceil(segments * mss as u64);
    unsent
        + in_flight
        + SKB_OVERHEAD_BYTES
            * (skbs(unsent, SIZE_GOAL_SEGMENTS) + skbs(in_flight, tso_segments(pacing_rate, mss)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Subflows of the emulator's kernel (6.18) sampled with `ss -tmi` every 10 ms during
    /// two runs of the upstream scheduler (points 7 and 9 of `crossval-coupled.toml`): the
    /// model's charge against the kernel's `w` (skmem wmem_queued), from the sample's
    /// unacknowledged segments, `notsent` bytes and pacing rate. Over 2,900 samples the
    /// median ratio was 0.98–1.03 per subflow; the payload alone was 0.86–0.95.
    #[test]
    fn subflows_are_charged_as_the_kernel_charged_them() {
        // (pacing rate bits/s, unacked segments, notsent bytes, kernel w)
        let samples = [
            (1.13e6, 5, 51_216, 64_160),
            (1.51e6, 12, 66_856, 96_424),
            (2.97e6, 19, 96_736, 142_096),
            (20.6e6, 75, 733_928, 884_824),
        ];
        for (rate, unacked, notsent, kernel) in samples {
            let w = wmem_queued(notsent, unacked * 1448, 1448, rate / 8.0);
            let ratio = w as f64 / kernel as f64;
            assert!((ratio - 1.0).abs() < 0.05, "{rate} bit/s: {w} vs {kernel}");
            let payload = (notsent + unacked * 1448) as f64 / kernel as f64;
            assert!(payload < 0.96, "the payload alone is short of the charge");
        }
    }

    /// The kernel's writer filled skbs to 45 segments (`ss -tmi`: 65 160 bytes unsent behind
    /// a full window at a 4 MiB receive window); a window of 64 KiB halves the goal.
    #[test]
    fn a_writer_fills_skbs_of_64_kib_or_half_the_peers_window() {
        assert_eq!(size_goal(4 << 20, 1448), 65_160);
        assert_eq!(size_goal(65_536, 1448), 22 * 1448);
        assert_eq!(size_goal(2_000, 1448), 1448);
        assert_eq!(size_goal(500, 1448), 1448);
        assert_eq!(size_goal(0, 1448), 45 * 1448); // no window seen yet
    }

    /// `tcp_tso_autosize`: a millisecond of the pacing rate, two segments at least, a size
    /// goal at most.
    #[test]
    fn tso_packets_carry_a_millisecond_of_the_pacing_rate() {
        assert_eq!(tso_segments(150_000.0, 1448), 2);
        assert_eq!(tso_segments(12.5e6, 1448), 8);
        assert_eq!(tso_segments(1.25e9, 1448), 45);
    }
}
