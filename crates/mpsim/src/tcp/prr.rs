//! Proportional Rate Reduction (RFC 6937), the window reduction of Linux's fast recovery since
//! 3.2, in its current Linux form (`tcp_cwnd_reduction`, net/ipv4/tcp_input.c, 5.12 on).
//!
//! Without it a SACK sender sets the window to ssthresh when recovery starts (RFC 6675 §5): it
//! sends nothing until the data in flight has fallen below ssthresh, then fills the window at
//! once, in a burst as large as the losses were many. PRR instead spreads the reduction over
//! the recovery's round trip. At every ACK, with `delivered` the data newly acknowledged or
//! SACKed and `pipe` the data in flight (RFC 6675), it allows `sndcnt` segments out and sets
//! the window to pipe + sndcnt:
//! - while pipe > ssthresh, sends in proportion to what was delivered:
//!   sndcnt = ⌈ssthresh · prr_delivered / prior_cwnd⌉ − prr_out;
//! - at or below ssthresh, sends what was delivered and has not been sent back yet, or this
//!   ACK's delivery, one more when the ACK advanced snd_una without finding a new loss (a slow
//!   start back towards ssthresh), but never beyond ssthresh: sndcnt = min(ssthresh − pipe,
//!   max(prr_delivered − prr_out, delivered) [+ 1]);
//! - the first ACK of a recovery always lets one segment out, the fast retransmit.
//!
//! Linux counts in segments; so does this, with MSS-sized segments. prior_cwnd is the window
//! when recovery started (the RFC's RecoverFS is the flight then; Linux uses the window).

/// One subflow's PRR state, reset when a recovery starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prr {
    /// The window when recovery started, segments.
    prior_cwnd: f64,
    /// Bytes delivered (acknowledged or SACKed) since recovery started.
    delivered: u64,
    /// The subflow's count of segments sent (new data and retransmissions) when recovery
    /// started: prr_out is what it has sent since.
    sent_at_start: u64,
}

/// What one ACK in recovery tells PRR.
#[derive(Clone, Copy, Debug)]
pub struct PrrAck {
    /// Bytes newly acknowledged or SACKed by this ACK.
    pub delivered: u64,
    /// The data in flight after it (RFC 6675 pipe), bytes.
    pub pipe: u64,
    pub ssthresh: f64,
    /// The ACK advanced snd_una.
    pub una_advanced: bool,
    /// It (or what it triggered) marked a segment lost.
    pub newly_lost: bool,
    /// The subflow's count of segments sent so far.
    pub segments_sent: u64,
}

impl Prr {
    /// A recovery starts with the window at `cwnd` bytes, `segments_sent` segments sent so far.
    pub fn start(&mut self, cwnd: f64, mss: u32, segments_sent: u64) {
        *self = Prr {
            prior_cwnd: (cwnd / f64::from(mss)).max(1.0),
            delivered: 0,
            sent_at_start: segments_sent,
        };
    }

    /// The window after an ACK in recovery, bytes; None when the ACK delivered nothing (the
    /// window stays).
    pub fn on_ack(&mut self, ack: PrrAck, mss: u32) -> Option<f64> {
        if ack.delivered == 0 {
            return None;
        }
        self.delivered += ack.delivered;
        let mss_f = f64::from(mss);
        let segments = |bytes: u64| (bytes as f64 / mss_f).ceil();
        let pipe = segments(ack.pipe);
        let ssthresh = (ack.ssthresh / mss_f).floor();
        let delivered = segments(self.delivered);
        let out = (ack.segments_sent - self.sent_at_start) as f64;
        let delta = ssthresh - pipe;
        let mut sndcnt = if delta < 0.0 {
            (ssthresh * delivered / self.prior_cwnd).ceil() - out
        } else {
            let mut n = (delivered - out).max(segments(ack.delivered));
            if ack.una_advanced && !ack.newly_lost {
                n += 1.0;
            }
            n.min(delta)
        };
        if out == 0.0 {
            sndcnt = sndcnt.max(1.0);
        }
        Some((pipe + sndcnt.max(0.0)) * mss_f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    /// A sender in recovery: PRR's state and the segments it has sent since the recovery began.
    struct Recovery {
        prr: Prr,
        sent: u64,
    }

    impl Recovery {
        /// From a window of 20 segments (ssthresh 10, Reno's halving).
        fn new() -> Recovery {
            let mut prr = Prr::default();
            prr.start(20.0 * f64::from(MSS), MSS, 0);
            Recovery { prr, sent: 0 }
        }

        /// The window, in segments, after an ACK delivering `delivered` segments with `pipe`
        /// in flight.
        fn ack(
            &mut self,
            delivered: u64,
            pipe: u64,
            una_advanced: bool,
            newly_lost: bool,
        ) -> Option<f64> {
            let ack = PrrAck {
                delivered: delivered * u64::from(MSS),
                pipe: pipe * u64::from(MSS),
                ssthresh: 10.0 * f64::from(MSS),
                una_advanced,
                newly_lost,
                segments_sent: self.sent,
            };
            self.prr.on_ack(ack, MSS).map(|cwnd| cwnd / f64::from(MSS))
        }
    }

    /// RFC 6937 §3: one loss in a window of 20 with ssthresh 10. While pipe exceeds ssthresh
    /// PRR sends one segment for every two delivered (ssthresh/prior_cwnd), the first at the
    /// first ACK (the fast retransmit); once pipe is down to ssthresh it sends as much as is
    /// delivered. The 19 ACKs of the round send 10 segments: ⌈10 · 19/20⌉.
    #[test]
    fn above_ssthresh_sends_in_proportion_to_what_was_delivered() {
        let mut pipe = 19u64; // the lost segment no longer counts
        let mut sends = Vec::new();
        let mut r = Recovery::new();
        for _ in 0..19 {
            pipe -= 1; // one delivered segment leaves the network
            let cwnd = r.ack(1, pipe, false, false).unwrap();
            let n = (cwnd - pipe as f64) as u64;
            r.sent += n;
            pipe += n;
            sends.push(n);
        }
        assert_eq!(sends.iter().sum::<u64>(), 10, "{sends:?}");
        // Pipe is 19 − k + (sent before ACK k): above 10 for the first 16 ACKs.
        let alternate: Vec<u64> = (0..16).map(|k| u64::from(k % 2 == 0)).collect();
        assert_eq!(sends[..16], alternate[..], "{sends:?}");
        assert_eq!(sends[16..], [0, 1, 1], "{sends:?}");
    }

    /// RFC 6937 §3 (reduction bound): at or below ssthresh, after losses that emptied the
    /// network, PRR sends what was delivered plus one per ACK that advanced snd_una without a
    /// new loss, a slow start back up to ssthresh, never a burst up to it.
    #[test]
    fn below_ssthresh_grows_back_by_one_segment_per_ack() {
        // pipe 2 after heavy losses, the fast retransmit already sent.
        let mut r = Recovery::new();
        r.sent = 1;
        // max(delivered 1 − out 1, 1) + 1 = 2 segments, not ssthresh − pipe = 8.
        assert_eq!(r.ack(1, 2, true, false), Some(4.0));
        // Without snd_una advancing: packet conservation only.
        let mut r = Recovery::new();
        r.sent = 1;
        assert_eq!(r.ack(1, 2, false, false), Some(3.0));
        // Never beyond ssthresh.
        let mut r = Recovery::new();
        r.sent = 1;
        assert_eq!(r.ack(5, 9, true, false), Some(10.0));
    }

    /// A new loss found by the ACK stops the extra segment; an ACK that delivers nothing
    /// leaves the window alone; the first ACK of a recovery always lets one segment out.
    #[test]
    fn a_new_loss_or_no_delivery_adds_nothing() {
        let mut r = Recovery::new();
        r.sent = 1;
        assert_eq!(r.ack(1, 2, true, true), Some(3.0));
        assert_eq!(r.ack(0, 2, true, false), None);
        let mut r = Recovery::new();
        assert_eq!(r.ack(1, 18, false, false), Some(19.0));
    }
}
