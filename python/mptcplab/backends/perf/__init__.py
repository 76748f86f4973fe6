"""The perf backend: saturated TCP and MPTCP transfers between real hosts.

``mptcplab perf server`` on one host, ``mptcplab perf client`` (or ``perf gain`` for a series
of runs) on another; each transfer's goodput is measured by the receiver and sent back to the
sender, which keeps the record. ``perf matrix`` turns the records of several hosts into the
NorNet-style source × destination matrix of log gains MPTCP/TCP (spec §5.3).

- :mod:`.wire`: what the client and the server say to each other around the data.
- :mod:`.sockets`: TCP or MPTCP chosen per socket; what the kernel made of it.
- :mod:`.server`, :mod:`.client`: the two ends of one transfer.
- :mod:`.gain`: the runs of one host towards its destinations, resumable.
- :mod:`.matrix`: the gain matrix and its critical relations.
"""

from mptcplab.backends.perf.sockets import PerfError

__all__ = ["PerfError"]
