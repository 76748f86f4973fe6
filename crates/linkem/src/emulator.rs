//! The real-time loop: read packets from the TUN devices, hand them to the [`Network`], and write
//! each one to its destination's TUN when its last hop releases it.
//!
//! Timing: the loop sleeps in epoll on a timerfd armed `spin_us` before the next release (timer
//! slack reduced to 1 ns), then busy-polls the last microseconds so a release is late only by the
//! write itself. Packets read while spinning are stamped on the spot. Every iteration takes one
//! clock reading `now`, releases all events due by `now`, and only then reads new packets
//! stamped `now`, so each link sees its arrivals in time order.

use crate::config::Config;
use crate::link::LinkDir;
use crate::network::{Delivery, Network};
use crate::status::{self, DirStatus, InterfaceStatus, LinkStatus, QueueTrace, Status};
use crate::sys;
use crate::sys::poll::{Epoll, Ready, SignalFd, TimerFd};
use mpsim::time::SimTime;
use std::collections::HashMap;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsFd, OwnedFd};

const TOKEN_TIMER: u64 = u64::MAX;
const TOKEN_SIGNAL: u64 = u64::MAX - 1;
/// Packets read from one device per loop iteration, so one busy sender cannot starve releases.
const READ_BATCH: usize = 32;
const MAX_PACKET: usize = 65_536;

struct Tun {
    fd: OwnedFd,
    stats: InterfaceStatus,
}

pub struct Emulator {
    cfg: Config,
    net: Network<Vec<u8>>,
    tuns: Vec<Tun>,
    epoll: Epoll,
    timer: TimerFd,
    signals: SignalFd,
    epoch_ns: u64,
    realtime: bool,
    seq: u64,
    unroutable: u64,
    not_ipv4: u64,
    pool: Vec<Vec<u8>>,
    scratch: Vec<u8>,
    trace: QueueTrace,
    next_sample: SimTime,
    sample_every: SimTime,
    /// Absolute expiry the timerfd is armed for (None once it fired). Re-arming costs a
    /// timer reprogramming (a VM exit on virtual machines), so an unchanged deadline is kept.
    armed_ns: Option<u64>,
}

/// Source and destination of an IPv4 header, or None for anything else.
pub fn ipv4_pair(pkt: &[u8]) -> Option<(Ipv4Addr, Ipv4Addr)> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let src = Ipv4Addr::new(pkt[12], pkt[13], pkt[14], pkt[15]);
    let dst = Ipv4Addr::new(pkt[16], pkt[17], pkt[18], pkt[19]);
    Some((src, dst))
}

/// The monotonic instant to arm the timer for, `spin` before the next event at `next`; None when
/// that instant has come and the loop should busy-poll. Saturating: a wake-up near the clock's
/// end (a sampling interval or a delay near its limit) must not wrap around to an instant in the
/// past, which would wake the loop at once, at every turn.
pub fn timer_deadline_ns(epoch_ns: u64, now: SimTime, next: SimTime, spin: SimTime) -> Option<u64> {
    if next <= now + spin {
        return None;
    }
    // `next` > `now + spin` ≥ `spin`: no underflow.
    Some(epoch_ns.saturating_add(next.0 - spin.0))
}

/// Count a release whose write to the destination's TUN device succeeded or not (`written`),
/// written at monotonic `wall_ns` and due at `due_ns`. A packet the kernel refused was not
/// delivered, and the time of a failed write says nothing about release timing: it is only a
/// write error, which the run's fidelity check reports.
fn account_release<P>(
    tun: &mut InterfaceStatus,
    dir: &mut LinkDir,
    d: &Delivery<P>,
    written: bool,
    wall_ns: u64,
    due_ns: u64,
) {
    if written {
        tun.tx_packets += 1;
        tun.tx_bytes += d.bytes as u64;
        dir.record_release(wall_ns, due_ns, d.bytes, d.back_to_back);
    } else {
        tun.write_errors += 1;
    }
}

impl Emulator {
    /// Create every TUN device in its namespace and prepare the loop, for a configuration
    /// [`Config::validate`] accepted. Signals are blocked from here on and read through a
    /// signalfd.
    pub fn new(cfg: Config) -> io::Result<Emulator> {
        let signals = SignalFd::new(&[libc::SIGTERM, libc::SIGINT, libc::SIGUSR1, libc::SIGHUP])?;
        let home = sys::netns::current()?;
        let mut tuns = Vec::with_capacity(cfg.interfaces.len());
        let mut iface_by_addr = HashMap::new();
        for (i, iface) in cfg.interfaces.iter().enumerate() {
            sys::netns::enter(&iface.netns)?;
            let fd = sys::tun::create(&iface.name);
            sys::netns::restore(&home)?;
            tuns.push(Tun {
                fd: fd?,
                stats: InterfaceStatus {
                    netns: iface.netns.display().to_string(),
                    name: iface.name.clone(),
                    ..InterfaceStatus::default()
                },
            });
            for a in &iface.addresses {
                iface_by_addr.insert(*a, i);
            }
        }
        let net = Network::build(&cfg, |a| iface_by_addr.get(&a).copied());
        let epoll = Epoll::new()?;
        let timer = TimerFd::new()?;
        epoll.add(timer.as_fd(), TOKEN_TIMER, false)?;
        epoll.add(signals.as_fd(), TOKEN_SIGNAL, false)?;
        for (i, t) in tuns.iter().enumerate() {
            epoll.add(t.fd.as_fd(), i as u64, false)?;
        }
        let _ = sys::process::set_timer_slack_ns(1);
        let realtime = match cfg.realtime_priority {
            Some(p) => sys::process::set_realtime(p).is_ok(),
            None => false,
        };
        let links = cfg.links.len();
        let sample_every = SimTime::from_millis_f64(cfg.trace_interval_ms);
        Ok(Emulator {
            cfg,
            net,
            tuns,
            epoll,
            timer,
            signals,
            epoch_ns: sys::monotonic_ns(),
            realtime,
            seq: 0,
            unroutable: 0,
            not_ipv4: 0,
            pool: Vec::new(),
            scratch: vec![0u8; MAX_PACKET],
            trace: QueueTrace {
                time_ns: Vec::new(),
                packets: vec![Vec::new(); links],
            },
            next_sample: SimTime::ZERO,
            sample_every,
            armed_ns: None,
        })
    }

    fn now(&self) -> SimTime {
        SimTime(sys::monotonic_ns().saturating_sub(self.epoch_ns))
    }

    /// Run until SIGTERM, SIGINT or SIGHUP; write the final status and return.
    pub fn run(&mut self) -> io::Result<()> {
        let spin = SimTime(self.cfg.spin_us.saturating_mul(1000));
        let mut ready: Vec<Ready> = Vec::with_capacity(64);
        let mut stop = false;
        while !stop {
            let now = self.now();
            self.release_due(now);
            for r in ready.drain(..) {
                match r.token {
                    TOKEN_TIMER => {
                        self.timer.drain();
                        self.armed_ns = None;
                    }
                    TOKEN_SIGNAL => {
                        while let Some(sig) = self.signals.next() {
                            if sig == libc::SIGUSR1 {
                                self.write_status(now, false)?;
                            } else {
                                stop = true;
                            }
                        }
                    }
                    i => self.read_tun(i as usize, now),
                }
            }
            if now >= self.next_sample {
                self.sample_queues(now);
                self.next_sample = now + self.sample_every;
            }
            if stop {
                break;
            }
            let next = self
                .net
                .next_event()
                .map_or(self.next_sample, |t| t.min(self.next_sample));
            let timeout = match timer_deadline_ns(self.epoch_ns, now, next, spin) {
                None => 0,
                Some(at) => {
                    if self.armed_ns != Some(at) {
                        self.timer.arm_at(at)?;
                        self.armed_ns = Some(at);
                    }
                    -1
                }
            };
            self.epoll.wait(&mut ready, timeout)?;
        }
        let now = self.now();
        self.write_status(now, true)
    }

    fn release_due(&mut self, now: SimTime) {
        while let Some(d) = self.net.pop_due(now) {
            let tun = &mut self.tuns[d.out_iface];
            // The release instant is when the packet is handed to the kernel: the write itself
            // runs the receiving host's stack and is not part of the emulated path.
            let wall = sys::monotonic_ns();
            let written = sys::write_once(tun.fd.as_fd(), &d.payload[..d.bytes as usize]).is_ok();
            let due = self.epoch_ns + d.scheduled.0;
            let dir = &mut self.net.dirs[d.last_dir];
            account_release(&mut tun.stats, dir, &d, written, wall, due);
            self.pool.push(d.payload);
        }
    }

    fn read_tun(&mut self, i: usize, now: SimTime) {
        for _ in 0..READ_BATCH {
            let n = match sys::read_nonblocking(self.tuns[i].fd.as_fd(), &mut self.scratch) {
                Ok(Some(n)) if n > 0 => n,
                _ => return,
            };
            let stats = &mut self.tuns[i].stats;
            stats.rx_packets += 1;
            stats.rx_bytes += n as u64;
            let Some((src, dst)) = ipv4_pair(&self.scratch[..n]) else {
                self.not_ipv4 += 1;
                continue;
            };
            let Some(route) = self.net.route_of(src, dst) else {
                self.unroutable += 1;
                continue;
            };
            // Copy into a right-sized buffer so that thousands of queued packets cost their own
            // size, not the scratch buffer's. A dropped packet's buffer is freed with it.
            let mut buf = self.pool.pop().unwrap_or_default();
            buf.clear();
            buf.extend_from_slice(&self.scratch[..n]);
            self.net.inject(route, now, n as u32, buf);
        }
    }

    fn sample_queues(&mut self, now: SimTime) {
        self.net.advance_all(now);
        self.trace.time_ns.push(self.epoch_ns + now.0);
        for (l, series) in self.trace.packets.iter_mut().enumerate() {
            series.push(self.net.dirs[2 * l].queued_packets() as u32);
        }
    }

    fn write_status(&mut self, now: SimTime, final_snapshot: bool) -> io::Result<()> {
        self.net.advance_all(now);
        self.seq += 1;
        let (user, system) = sys::process::cpu_seconds();
        let dir_status = |d: &LinkDir| DirStatus {
            rate_mbps: d.rate().map(|r| r.0 / 1e6),
            queue: d.describe_queue(),
            queued_packets: d.queued_packets(),
            counters: d.counters.clone(),
            lateness: d.lateness.summary(),
        };
        let links = self
            .net
            .link_ids
            .iter()
            .enumerate()
            .map(|(i, id)| LinkStatus {
                id: id.clone(),
                forward: dir_status(&self.net.dirs[2 * i]),
                reverse: dir_status(&self.net.dirs[2 * i + 1]),
            })
            .collect();
        let st = Status {
            format_version: status::STATUS_FORMAT_VERSION,
            seq: self.seq,
            final_snapshot,
            time_ns: self.epoch_ns + now.0,
            started_ns: self.epoch_ns,
            cpu_user_s: user,
            cpu_system_s: system,
            realtime: self.realtime,
            spin_us: self.cfg.spin_us,
            links,
            interfaces: self.tuns.iter().map(|t| t.stats.clone()).collect(),
            unroutable: self.unroutable,
            not_ipv4: self.not_ipv4,
            in_flight: self.net.in_flight(),
            queue_trace: final_snapshot.then(|| std::mem::take(&mut self.trace)),
        };
        status::write_atomic(&self.cfg.status_path, &st)?;
        for d in &mut self.net.dirs {
            d.start_window();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_packet_the_device_took_is_delivered_and_timed() {
        let mut tun = InterfaceStatus::default();
        let mut dir = crate::link::pure_delay(SimTime::from_millis(10));
        let d = |payload| Delivery {
            payload,
            bytes: 1500,
            scheduled: SimTime::from_millis(10),
            out_iface: 0,
            last_dir: 0,
            back_to_back: false,
        };
        // Refused (a device taken down, say) 5 µs late, then one taken 20 µs late.
        account_release(&mut tun, &mut dir, &d(1), false, 10_005_000, 10_000_000);
        account_release(&mut tun, &mut dir, &d(2), true, 10_020_000, 10_000_000);
        assert_eq!(
            (tun.write_errors, tun.tx_packets, tun.tx_bytes),
            (1, 1, 1500)
        );
        assert_eq!(dir.counters.delivered, 1);
        let lateness = dir.lateness.summary();
        assert_eq!(lateness.count, 1);
        assert_eq!(lateness.max_us, 20.0);
    }

    #[test]
    fn the_timer_is_armed_spin_before_the_next_event() {
        let epoch = 7_000_000_000;
        let spin = SimTime(15_000);
        let now = SimTime::from_millis(3);
        let next = SimTime::from_millis(10);
        assert_eq!(
            timer_deadline_ns(epoch, now, next, spin),
            Some(epoch + 10_000_000 - 15_000)
        );
        // Within the spin window (or past): poll without sleeping.
        assert_eq!(timer_deadline_ns(epoch, now, now + spin, spin), None);
        assert_eq!(timer_deadline_ns(epoch, next, now, spin), None);
    }

    #[test]
    fn an_event_at_the_clocks_end_arms_the_timer_at_the_clocks_end() {
        // A monotonic clock of a day's uptime: epoch + (MAX − spin) does not fit in 64 bits.
        let epoch = 86_400_000_000_000;
        let at = timer_deadline_ns(epoch, SimTime::ZERO, SimTime::MAX, SimTime(15_000));
        assert_eq!(at, Some(u64::MAX));
        let spin_all = SimTime(u64::MAX);
        assert_eq!(
            timer_deadline_ns(epoch, SimTime(1), SimTime::MAX, spin_all),
            None
        );
    }
}
