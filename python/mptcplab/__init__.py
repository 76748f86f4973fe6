"""mptcplab — find out, with statistical evidence, how Multipath TCP behaves.

Notebook entry points:

- ``mptcplab.scenario`` — the scenario model shared by every backend, and its templates;
- ``mptcplab.sim`` — run a scenario on the packet-level simulator;
- ``mptcplab.emu`` — run the same scenario on the real Linux kernel in emulated networks;
- ``mptcplab.perf`` — TCP and MPTCP transfers between real hosts, and their gain matrix;
- ``mptcplab.design`` — space-filling and factorial experimental designs;
- ``mptcplab.campaign`` — campaigns: designs × templates × replications, stored in SQLite;
- ``mptcplab.analysis`` — metrics, sensitivity analysis, plots and reports.
"""

__version__ = "0.1.0"
