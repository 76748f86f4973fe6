// The cases of crates/mpsim/benches/throughput.rs built on htsim, the C++ packet simulator the
// project's speed targets refer to, so that both can be timed on the same machine in the same
// run (scripts/htsim_reference.py builds and runs this against a csg-htsim checkout:
// https://github.com/Broadcom/csg-htsim, sim/).
//
// Each bottleneck is htsim's usual pair for a link: a drop-tail Queue sized to one BDP feeding
// a Pipe of the one-way delay; ACKs come back through a Pipe of the same delay (uncongested).
// 1500-byte packets, bulk senders that start at time 0, RTOs scanned every 10 ms (htsim's
// TcpRtxTimerScanner as its own examples use it), MPTCP with htsim's COUPLED_INC (LIA).
//
// Prints one line: case, wall seconds of the event loop, data packets delivered in order.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "config.h"
#include "eventlist.h"
#include "mtcp.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "route.h"
#include "tcp.h"

namespace {

struct Bottleneck {
    Queue* queue;
    Pipe* forward;
    Pipe* back;
};

uint64_t bdp_packets(double mbps, double rtt_ms) {
    double packets = std::ceil(mbps * 1e6 * rtt_ms / 1e3 / 8.0 / 1500.0);
    return packets < 1 ? 1 : static_cast<uint64_t>(packets);
}

Bottleneck bottleneck(EventList& ev, double mbps, double rtt_ms) {
    Bottleneck b;
    b.queue = new Queue(speedFromMbps(mbps), memFromPkt(static_cast<double>(bdp_packets(mbps, rtt_ms))),
                        ev, nullptr);
    b.forward = new Pipe(timeFromMs(rtt_ms / 2.0), ev);
    b.back = new Pipe(timeFromMs(rtt_ms / 2.0), ev);
    return b;
}

struct Flows {
    EventList& ev;
    TcpRtxTimerScanner& scanner;
    std::vector<TcpSink*> sinks;

    TcpSrc* subflow(const Bottleneck& b, MultipathTcpSrc* connection) {
        TcpSrc* src = new TcpSrc(nullptr, nullptr, ev);
        TcpSink* sink = new TcpSink();
        scanner.registerTcp(*src);
        Route* out = new Route();
        out->push_back(b.queue);
        out->push_back(b.forward);
        out->push_back(sink);
        Route* back = new Route();
        back->push_back(b.back);
        back->push_back(src);
        if (connection != nullptr) {
            connection->addSubflow(src);
        }
        src->connect(*out, *back, *sink, 0);
        sinks.push_back(sink);
        return src;
    }

    void tcp(const Bottleneck& b) { subflow(b, nullptr); }

    void mptcp(const std::vector<Bottleneck>& paths) {
        MultipathTcpSrc* connection = new MultipathTcpSrc(COUPLED_INC, ev, nullptr);
        for (const Bottleneck& b : paths) {
            subflow(b, connection);
        }
    }
};

bool build(const char* name, EventList& ev, Flows& flows) {
    if (!strcmp(name, "A")) {
        flows.tcp(bottleneck(ev, 100, 20));
    } else if (!strcmp(name, "R")) {
        Bottleneck x = bottleneck(ev, 100, 20), y = bottleneck(ev, 100, 40);
        for (int i = 0; i < 20; i++) flows.tcp(x);
        for (int i = 0; i < 20; i++) flows.tcp(y);
    } else if (!strcmp(name, "B")) {
        flows.mptcp({bottleneck(ev, 10, 20), bottleneck(ev, 2, 150)});
    } else if (!strcmp(name, "C")) {
        flows.mptcp({bottleneck(ev, 100, 20), bottleneck(ev, 100, 20)});
    } else if (!strcmp(name, "D")) {
        Bottleneck x = bottleneck(ev, 100, 20), y = bottleneck(ev, 100, 40);
        for (int i = 0; i < 30; i++) flows.mptcp({x, y});
        for (int i = 0; i < 10; i++) flows.tcp(x);
    } else if (!strcmp(name, "E")) {
        Bottleneck x = bottleneck(ev, 1000, 20), y = bottleneck(ev, 1000, 40);
        for (int i = 0; i < 3000; i++) flows.mptcp({x, y});
        for (int i = 0; i < 1000; i++) flows.tcp(x);
    } else {
        return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s A|R|B|C|D|E\n", argv[0]);
        return 2;
    }
    const char* name = argv[1];
    // htsim's TCP prints a line on every retransmission timeout; writing ~70,000 of them in
    // case E would be timed as simulation work.
    std::cout.rdbuf(nullptr);
    Packet::set_packet_size(1500);
    EventList ev;
    ev.setEndtime(timeFromSec(strcmp(name, "E") == 0 ? 10.0 : 60.0));
    TcpRtxTimerScanner scanner(timeFromMs(10), ev);
    Flows flows{ev, scanner, {}};
    if (!build(name, ev, flows)) {
        fprintf(stderr, "unknown case %s (expected A, R, B, C, D or E)\n", name);
        return 2;
    }
    auto start = std::chrono::steady_clock::now();
    while (ev.doNextEvent()) {
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    uint64_t bytes = 0;
    for (TcpSink* sink : flows.sinks) bytes += sink->_cumulative_ack;
    printf("%s %.6f %llu\n", name, wall,
           static_cast<unsigned long long>(bytes / Packet::data_packet_size()));
    return 0;
}
