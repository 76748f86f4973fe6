//! HyStart, the slow-start exit of Linux CUBIC (net/ipv4/tcp_cubic.c, `hystart_update`;
//! Ha and Rhee, "Taming the elephants: New TCP slow start", Computer Networks 55(9), 2011).
//! Linux enables it by default (`hystart = 1`, `hystart_detect = 3`: both detectors).
//!
//! Slow start is cut into rounds, each from `snd_nxt` at its start until `snd_una` passes it.
//! Rounds are marked at every window size, as Linux 3.x does (`bictcp_cong_avoid`) and Linux
//! does again since 6.14 (commit 08181a887689, "tcp_cubic: fix incorrect HyStart round start
//! detection"; 6.4–6.13 marked them only from 16 segments on). Once the window reaches
//! `hystart_low_window` (16 segments), two detectors watch each round; either one ends slow
//! start by setting ssthresh to the current window:
//! - ACK train: ACKs arriving at most 2 ms apart (`hystart_ack_delta_us`) form a train from the
//!   start of the round; when it has lasted longer than (delay_min + ack_delay)/2 the window
//!   already covers the path (the halving is for unpaced senders, as the emulated kernel is
//!   without fq). ack_delay = min(1 ms, 4 · GSO_MAX_SIZE / pacing rate).
//! - Delay increase: the minimum of the round's first 8 RTT samples (and of later ones) exceeds
//!   delay_min + clamp(delay_min/8, 4 ms, 16 ms).
//!
//! delay_min is the smallest RTT sample seen; a timeout resets it and re-arms the detectors
//! (`bictcp_reset` on entering the Loss state). Samples within 1 s of the start of a
//! congestion-avoidance epoch are ignored, as Linux ignores them right after recovery.

use crate::time::SimTime;

/// `hystart_low_window`, segments.
const LOW_WINDOW_SEGMENTS: f64 = 16.0;
/// `hystart_ack_delta_us`.
const ACK_DELTA: SimTime = SimTime(2_000_000);
/// HYSTART_MIN_SAMPLES.
const MIN_SAMPLES: u32 = 8;
/// HYSTART_DELAY_MIN and HYSTART_DELAY_MAX, seconds.
const DELAY_MIN_S: f64 = 0.004;
const DELAY_MAX_S: f64 = 0.016;
/// GSO_MAX_SIZE, bytes, in `hystart_ack_delay`.
const GSO_MAX_BYTES: f64 = 65_536.0;

/// One subflow's HyStart state.
#[derive(Clone, Debug)]
pub struct HyStart {
    /// Slow start was ended by a detector (until the next timeout).
    found: bool,
    /// Smallest RTT sample, seconds (0 = none yet).
    delay_min: f64,
    round_start: SimTime,
    last_ack: SimTime,
    /// The round ends when snd_una passes this.
    end_seq: u64,
    /// Smallest RTT sample of the current round, seconds.
    curr_rtt: f64,
    sample_cnt: u32,
}

/// What HyStart needs to know about the subflow at an ACK.
#[derive(Clone, Copy, Debug)]
pub struct SlowStartState {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub mss: f64,
    pub srtt_s: f64,
    pub snd_una: u64,
    pub snd_nxt: u64,
}

impl Default for HyStart {
    fn default() -> HyStart {
        HyStart {
            found: false,
            delay_min: 0.0,
            round_start: SimTime::ZERO,
            last_ack: SimTime::ZERO,
            end_seq: 0,
            curr_rtt: f64::INFINITY,
            sample_cnt: 0,
        }
    }
}

impl HyStart {
    /// A timeout: forget delay_min and watch the next slow start again.
    pub fn reset(&mut self) {
        *self = HyStart::default();
    }

    /// An RTT sample Linux keeps (`bictcp_acked`): delay_min follows it whether or not the
    /// detectors are on, as CUBIC's window curve reads it too.
    pub fn note_delay(&mut self, rtt_s: f64) {
        let rtt_s = rtt_s.max(1e-6);
        if self.delay_min == 0.0 || rtt_s < self.delay_min {
            self.delay_min = rtt_s;
        }
    }

    /// Smallest RTT sample since the start or the last timeout, seconds; 0 before any.
    pub fn delay_min(&self) -> f64 {
        self.delay_min
    }

    fn start_round(&mut self, now: SimTime, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = f64::INFINITY;
        self.sample_cnt = 0;
    }

    /// An ACK with an RTT sample of `rtt_s` seconds. Returns true when slow start must end
    /// (ssthresh ← cwnd). `watch` is false for samples Linux discards (right after recovery).
    pub fn on_rtt_sample(
        &mut self,
        s: &SlowStartState,
        rtt_s: f64,
        now: SimTime,
        watch: bool,
    ) -> bool {
        if !watch {
            return false;
        }
        let rtt_s = rtt_s.max(1e-6);
        self.note_delay(rtt_s);
        if self.found || s.cwnd >= s.ssthresh {
            return false;
        }
        // Rounds are marked at any window, so the first watched round starts where it really
        // began and not at the ACK that took the window to 16 segments.
        if s.snd_una > self.end_seq {
            self.start_round(now, s.snd_nxt);
        }
        if s.cwnd < LOW_WINDOW_SEGMENTS * s.mss {
            return false;
        }
        let mut exit = false;
        if now.saturating_sub(self.last_ack) <= ACK_DELTA {
            self.last_ack = now;
            let pacing_rate = if s.srtt_s > 0.0 {
                2.0 * s.cwnd / s.srtt_s
            } else {
                0.0
            };
            let ack_delay = if pacing_rate > 0.0 {
                (4.0 * GSO_MAX_BYTES / pacing_rate).min(0.001)
            } else {
                0.0
            };
            let threshold = (self.delay_min + ack_delay) / 2.0;
            exit |= now.saturating_sub(self.round_start).as_secs_f64() > threshold;
        }
        self.curr_rtt = self.curr_rtt.min(rtt_s);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let margin = (self.delay_min / 8.0).clamp(DELAY_MIN_S, DELAY_MAX_S);
            exit |= self.curr_rtt > self.delay_min + margin;
        }
        if exit {
            self.found = true;
        }
        exit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: f64 = 1448.0;

    fn state(cwnd_segments: f64, snd_una: u64, snd_nxt: u64) -> SlowStartState {
        SlowStartState {
            cwnd: cwnd_segments * MSS,
            ssthresh: f64::INFINITY,
            mss: MSS,
            srtt_s: 0.1,
            snd_una,
            snd_nxt,
        }
    }

    /// Delay detector: RTT samples 20 ms above a 100 ms minimum (threshold 100 + 12.5 ms) end
    /// slow start once the round has 8 samples; samples 10 ms above do not.
    #[test]
    fn a_delay_increase_ends_slow_start() {
        for (extra_ms, expect) in [(10.0, false), (20.0, true)] {
            let mut h = HyStart::default();
            let t0 = SimTime::from_millis(1000);
            assert!(!h.on_rtt_sample(&state(20.0, 0, 0), 0.1, t0, true));
            let mut exited = false;
            for k in 1..=12u64 {
                // ACKs 5 ms apart: no ACK train.
                let now = t0 + SimTime::from_millis(5 * k);
                let s = state(20.0, k * 1448, 100 * 1448);
                exited |= h.on_rtt_sample(&s, 0.1 + extra_ms / 1000.0, now, true);
            }
            assert_eq!(exited, expect, "+{extra_ms} ms");
        }
    }

    /// ACK-train detector: ACKs 1 ms apart for longer than half of delay_min (+1 ms ack delay)
    /// end slow start; a train shorter than that does not.
    #[test]
    fn a_long_ack_train_ends_slow_start() {
        let mut h = HyStart::default();
        let t0 = SimTime::from_millis(1000);
        h.on_rtt_sample(&state(20.0, 0, 0), 0.04, t0, true);
        let mut exit_at = None;
        for k in 1..=40u64 {
            let now = t0 + SimTime::from_millis(k);
            let s = state(20.0, k * 1448, 1000 * 1448);
            if h.on_rtt_sample(&s, 0.04, now, true) && exit_at.is_none() {
                exit_at = Some(k);
            }
        }
        // The round starts at the first ACK (k = 1); threshold (40 + 1)/2 = 20.5 ms.
        assert_eq!(exit_at, Some(22));
    }

    /// A round that began below 16 segments is timed from its real start. The window is 14
    /// segments at the ACK that passes the previous round's end (k = 1) and 16 or more from the
    /// next ACK on, 1 ms later; the ACK train (ACKs 1 ms apart, threshold (40 + 1)/2 = 20.5 ms)
    /// counts from k = 1, so slow start ends at k = 22. Linux 6.4–6.13, which began the round
    /// only at the first ACK at 16 segments, would end it at k = 23.
    #[test]
    fn a_round_is_timed_from_its_start_even_below_sixteen_segments() {
        let mut h = HyStart::default();
        let t0 = SimTime::from_millis(1000);
        // The first sample sets delay_min and opens a round that ends at byte 10 * MSS.
        h.on_rtt_sample(&state(12.0, 1448, 10 * 1448), 0.04, t0, true);
        let mut exit_at = None;
        for k in 1..=40u64 {
            let now = t0 + SimTime::from_millis(200 + k);
            let cwnd = if k == 1 { 14.0 } else { 16.0 + k as f64 };
            let s = state(cwnd, (10 + k) * 1448, 1000 * 1448);
            if h.on_rtt_sample(&s, 0.04, now, true) && exit_at.is_none() {
                exit_at = Some(k);
            }
        }
        assert_eq!(exit_at, Some(22));
    }

    /// Below 16 segments, after a detection, or outside slow start nothing happens.
    #[test]
    fn hystart_only_watches_large_slow_starts() {
        let mut h = HyStart::default();
        let t0 = SimTime::from_millis(1000);
        for k in 0..40u64 {
            let now = t0 + SimTime::from_millis(k);
            assert!(!h.on_rtt_sample(&state(15.0, k * 1448, 1000 * 1448), 0.2, now, true));
        }
        let mut s = state(20.0, 0, 0);
        s.ssthresh = 10.0 * MSS;
        assert!(!h.on_rtt_sample(&s, 0.5, t0, true));
    }
}
