//! The receiver's RTT estimate, which sets the interval of receive-buffer auto-tuning (dynamic
//! right-sizing, spec §3.7): how long the receiver counts the bytes the application read
//! before it sizes the buffer for twice that. It is measured from the timestamps the sender
//! echoes (RFC 7323): the time since the receiver sent the ACK whose timestamp a data segment
//! carries back.
//!
//! Both forms ([`DrsVariant`]) sample as Linux's `tcp_rcv_rtt_measure_ts`
//! (`net/ipv4/tcp_input.c`) does: its timestamps count milliseconds, so a sample is a whole
//! number of them, taken once per echoed timestamp value (`rcv_rtt_last_tsecr`, in 5.x as in
//! 6.18) and from full-sized segments only. They differ in `tcp_rcv_rtt_update`:
//! - `Classic` (spec §3.7; Linux 4.19 to 6.15): a zero sample counts as one millisecond, and
//!   every sample moves the estimate by 1/8 of the difference.
//! - `Linux` (Linux 6.16 on, the emulator's kernel 6.18; after commits b879dcb1aeec "tcp:
//!   always seek for minimal rtt in tcp_rcv_rtt_update()" and d59fc95be9d0 "tcp: remove zero
//!   TCP TS samples for autotuning"): a zero sample is dropped; a sample below the estimate
//!   replaces it at once, one above moves it by 1/8. The estimate thus stays near the path's
//!   smallest RTT rather than following a queue that builds, and the buffer is sized for less.
//!
//! Linux also skips a larger sample while data waits unread in the receive queue (a00f135cd986);
//! the simulator's application reads at once, so that queue is always empty here.

use crate::scenario::DrsVariant;
use crate::time::{u64_to_f64, SimTime};

/// Nanoseconds per tick of Linux's TCP timestamp clock (`tcp_clock_ms`).
const TS_TICK_NS: u64 = 1_000_000;

#[derive(Clone, Debug)]
pub struct RcvRttEstimator {
    /// The estimate, seconds; 0 until the first sample.
    seconds: f64,
    variant: DrsVariant,
    /// `rcv_rtt_last_tsecr`: the echoed timestamp (in ticks) of the last sample.
    last_tsecr_ticks: Option<u64>,
}

impl RcvRttEstimator {
    pub fn new(variant: DrsVariant) -> RcvRttEstimator {
        RcvRttEstimator {
            seconds: 0.0,
            variant,
            last_tsecr_ticks: None,
        }
    }

    /// The estimate, seconds; 0 while there is none.
    pub fn seconds(&self) -> f64 {
        self.seconds
    }

    /// A data segment of `len` payload bytes (the sender's full size being `mss`) arrived at
    /// `now` echoing the timestamp `ts_ecr`, the receiver's clock when it sent that ACK.
    pub fn on_segment(&mut self, now: SimTime, ts_ecr: u64, len: u32, mss: u32) {
        if now.0 < ts_ecr {
            return;
        }
        let tsecr = ts_ecr / TS_TICK_NS;
        if self.last_tsecr_ticks == Some(tsecr) {
            return;
        }
        self.last_tsecr_ticks = Some(tsecr);
        let ticks = now.0 / TS_TICK_NS - tsecr;
        if len < mss {
            return;
        }
        let ticks = match self.variant {
            DrsVariant::Classic => ticks.max(1),
            DrsVariant::Linux if ticks == 0 => return,
            DrsVariant::Linux => ticks,
        };
        let sample = u64_to_f64(ticks * TS_TICK_NS) * 1e-9;
        let latch = self.variant == DrsVariant::Linux && sample < self.seconds;
        self.seconds = if self.seconds == 0.0 || latch {
            sample
        } else {
            self.seconds - self.seconds / 8.0 + sample / 8.0
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn ms(v: f64) -> SimTime {
        SimTime::from_millis_f64(v)
    }

    /// `tcp_rcv_rtt_update` (4.19 to 6.15), with timestamps: `m -= old >> 3; new = old + m` on
    /// the estimate kept ×8, a zero sample raised to one tick (`if (!delta) delta = 1`), and
    /// `tcp_rcv_rtt_measure_ts`'s filters: one sample per echoed value, full-sized segments.
    #[test]
    fn classic_smooths_whole_millisecond_samples_with_gain_one_eighth() {
        let mut e = RcvRttEstimator::new(DrsVariant::Classic);
        e.on_segment(ms(110.7), ms(100.2).0, MSS, MSS);
        assert!((e.seconds() - 0.010).abs() < 1e-12, "110 − 100 ticks");
        // A 50 ms sample moves 10 ms by (50 − 10)/8 = 5 ms; a short segment gives none.
        e.on_segment(ms(250.0), ms(200.0).0, 100, MSS);
        assert!((e.seconds() - 0.010).abs() < 1e-12);
        e.on_segment(ms(350.0), ms(300.0).0, MSS, MSS);
        assert!((e.seconds() - 0.015).abs() < 1e-12);
        // The same echoed value again: no sample.
        e.on_segment(ms(390.0), ms(300.0).0, MSS, MSS);
        assert!((e.seconds() - 0.015).abs() < 1e-12);
        // A smaller sample is smoothed too: 15 + (5 − 15)/8 = 13.75 ms.
        e.on_segment(ms(405.0), ms(400.0).0, MSS, MSS);
        assert!((e.seconds() - 0.01375).abs() < 1e-12);
        // Under one tick counts as one: 13.75 + (1 − 13.75)/8.
        e.on_segment(ms(500.6), ms(500.1).0, MSS, MSS);
        assert!((e.seconds() - (0.01375 + (0.001 - 0.01375) / 8.0)).abs() < 1e-12);
    }

    /// `tcp_rcv_rtt_update` (6.16 on): `m = sample << 3; if (old == 0 || m < old) new = m;
    /// else new = old - (old >> 3) + sample`, on millisecond timestamps.
    #[test]
    fn linux_latches_smaller_samples_and_moves_up_by_one_eighth() {
        let mut e = RcvRttEstimator::new(DrsVariant::Linux);
        e.on_segment(ms(140.2), ms(100.0).0, MSS, MSS);
        assert!(
            (e.seconds() - 0.040).abs() < 1e-12,
            "whole milliseconds: 40"
        );
        // Larger: 40 + (80 - 40)/8 = 45 ms.
        e.on_segment(ms(281.0), ms(201.0).0, MSS, MSS);
        assert!((e.seconds() - 0.045).abs() < 1e-12);
        // Smaller: taken at once.
        e.on_segment(ms(312.9), ms(306.0).0, MSS, MSS);
        assert!((e.seconds() - 0.006).abs() < 1e-12);
    }

    #[test]
    fn linux_takes_one_sample_per_echoed_timestamp_from_full_segments() {
        let mut e = RcvRttEstimator::new(DrsVariant::Linux);
        e.on_segment(ms(110.0), ms(100.0).0, MSS, MSS);
        // The same echoed tick again: no sample, however small it would be.
        e.on_segment(ms(104.0), ms(100.5).0, MSS, MSS);
        assert!((e.seconds() - 0.010).abs() < 1e-12);
        // A short segment gives none, and its echoed value still counts as seen.
        e.on_segment(ms(203.0), ms(201.0).0, 500, MSS);
        e.on_segment(ms(203.5), ms(201.0).0, MSS, MSS);
        assert!((e.seconds() - 0.010).abs() < 1e-12);
        // Under one tick: no sample (Linux drops zero samples).
        e.on_segment(ms(300.7), ms(300.2).0, MSS, MSS);
        assert!((e.seconds() - 0.010).abs() < 1e-12);
        e.on_segment(ms(402.0), ms(400.0).0, MSS, MSS);
        assert!((e.seconds() - 0.002).abs() < 1e-12);
    }
}
