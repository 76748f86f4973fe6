//! The writer of a plain TCP connection, as Linux's `tcp_sendmsg_locked` runs it
//! (net/ipv4/tcp.c, 6.18). Data goes into skbs of a size goal ([`truesize::size_goal`]). The
//! send buffer is tested against the socket's memory ([`truesize::wmem_queued`]) only before a
//! new skb is started (`sk_stream_memory_free` at `new_segment`); the last skb, while unsent,
//! takes data up to the size goal untested. Within one write call the kernel pushes the head
//! skb out as it fills (`tcp_push_one`), the window cuts it, and the unsent rest, a new tail,
//! is filled again. So a writer woken with its buffer down to the watermark fills the
//! congestion window and leaves a full skb unsent behind it, however small the buffer.
//!
//! Measured on the emulator (one CUBIC flow, 50 Mbit/s, 40 ms, a 16 KiB send buffer, `ss -tmi`
//! every 20 ms): the queue swung between one skb in flight and a full window (83 segments)
//! with 57-65 KB unsent behind it, 215 328 bytes charged against a buffer of 16 384, and the
//! flow carried 15.2 Mbit/s, where a window of the buffer's size carries 3.

use super::Connection;
use crate::mptcp::scheduler;
use crate::tcp::truesize;
use crate::time::SimTime;

impl Connection {
    /// `sk_wmem_queued` of a TCP connection: its unsent data in size-goal skbs, its data in
    /// flight in TSO packets.
    pub(super) fn tcp_wmem_queued(&self) -> u64 {
        let sf = &self.subflows[0];
        truesize::wmem_queued(
            self.write_end - self.snd_nxt_dsn,
            self.snd_nxt_dsn - self.data_una,
            sf.mss(),
            scheduler::pacing_rate(sf),
        )
    }

    /// The application's turn to write. A writer that stopped on a full buffer sleeps until
    /// the free memory is half the memory queued (`sk_stream_write_space`, `tcp_poll`).
    /// Returns the send buffer while it is writing: the pushes that follow hand it back the
    /// tail they cut ([`Connection::tcp_write`]). Inlined into the push loops, as `app_write`
    /// is.
    #[inline(always)]
    pub(super) fn tcp_app_write(&mut self, now: SimTime) -> Option<u64> {
        let limit = self.sndbuf_limit();
        if self.writer_asleep {
            // The memory is at least the payload: most ACKs leave the writer asleep on the
            // payload alone, without working out the memory.
            let asleep = |queued: u64| limit.saturating_sub(queued) < queued / 2;
            if asleep(self.write_end - self.data_una) || asleep(self.tcp_wmem_queued()) {
                return None;
            }
            self.writer_asleep = false;
        }
        if now >= self.app_stop {
            return None;
        }
        self.tcp_write(now, limit);
        Some(limit)
    }

    /// `tcp_sendmsg_locked`'s loop up to where it stops: fill the unsent tail skb to the size
    /// goal, then start new skbs while the memory queued is under `limit`. Returns the bytes
    /// written.
    pub(super) fn tcp_write(&mut self, now: SimTime, limit: u64) -> u64 {
        let mss = self.subflows[0].mss();
        self.max_peer_window = self
            .max_peer_window
            .max(self.peer_edge.saturating_sub(self.data_una));
        let goal = truesize::size_goal(self.max_peer_window, mss);
        let start = self.write_end;
        loop {
            // The sender cut what it sent off the tail; the rest is an skb of its own.
            let tail = self.write_end - self.tail_start.max(self.snd_nxt_dsn);
            let room = if tail > 0 && tail < goal {
                goal - tail
            } else if self.write_end - self.data_una < limit && self.tcp_wmem_queued() < limit {
                self.tail_start = self.write_end;
                goal
            } else {
                self.writer_asleep = self.app.wants_to_write(self.write_end);
                break;
            };
            let written = self.app.write(self.write_end, room, now);
            self.write_end += written;
            if written < room {
                break;
            }
        }
        self.write_end - start
    }
}

#[cfg(test)]
mod tests {
    use crate::mptcp::connection::tests::connection_from;
    use crate::time::SimTime;
    use serde_json::json;

    const GOAL: u64 = 45 * 1448;

    fn tcp(sndbuf: u64) -> super::Connection {
        let routes = [(0, 1, SimTime::from_millis(40))];
        let mut c = connection_from(json!({"protocol": "tcp", "sndbuf_bytes": sndbuf}), &routes);
        c.peer_edge = 4 << 20; // a 4 MiB receive window
        c
    }

    /// The buffer is tested only before an skb is started, and an skb takes a size goal of
    /// data: a writer facing an empty 16 KiB buffer writes one skb of 65 160 bytes, and one
    /// facing a 100 000-byte buffer two.
    #[test]
    fn a_writer_starts_skbs_while_the_memory_is_under_the_buffer() {
        let mut c = tcp(16_384);
        assert!(c.tcp_app_write(SimTime::ZERO).is_some());
        assert_eq!(c.write_end, GOAL);
        assert!(c.writer_asleep);
        let mut c = tcp(100_000);
        c.tcp_app_write(SimTime::ZERO);
        assert_eq!(c.write_end, 2 * GOAL);
    }

    /// The skb the sender has cut is filled again without a test of the buffer: after 30
    /// segments of the first skb went out, the writer puts 30 segments behind the 15 left,
    /// though 16 KiB is long exceeded.
    #[test]
    fn the_tail_the_sender_cut_is_filled_to_the_size_goal() {
        let mut c = tcp(16_384);
        c.tcp_app_write(SimTime::ZERO);
        c.snd_nxt_dsn = 30 * 1448;
        assert_eq!(c.tcp_write(SimTime::ZERO, c.sndbuf_limit()), 30 * 1448);
        assert_eq!(c.write_end - c.snd_nxt_dsn, GOAL);
        // Once the tail is whole again, the full buffer stops the writer.
        assert_eq!(c.tcp_write(SimTime::ZERO, c.sndbuf_limit()), 0);
        assert!(c.writer_asleep);
    }

    /// Asleep, the writer waits until the memory queued is down to two thirds of the buffer
    /// (`sk_stream_write_space`): with 10 segments unacknowledged, in five TSO packets of two,
    /// 20 880 bytes are charged, above 16 384; with 4, 8 352, under 2/3 of it.
    #[test]
    fn an_asleep_writer_waits_for_the_memory_to_fall_to_two_thirds() {
        let mut c = tcp(16_384);
        c.tcp_app_write(SimTime::ZERO);
        c.snd_nxt_dsn = GOAL;
        c.data_una = GOAL - 10 * 1448;
        assert!(c.tcp_app_write(SimTime::ZERO).is_none());
        assert_eq!(c.write_end, GOAL);
        c.data_una = GOAL - 4 * 1448;
        assert!(c.tcp_app_write(SimTime::ZERO).is_some());
        assert_eq!(c.write_end, 2 * GOAL);
    }
}
