"""The emulator backend: the Linux kernel's own TCP and MPTCP between network namespaces,
joined by linkem, a userspace link emulator over TUN devices (DESIGN.md, EmuBackend).

Modules, in the order a run uses them:

- :mod:`.kernel` — what the running kernel offers; refusals of what it cannot do;
- :mod:`.addressing` — namespaces, interfaces, addresses and routes of a scenario (pure);
- :mod:`.rundir` — the run's directory, lock and pid records under /run/mptcplab/emu;
- :mod:`.netns` — namespaces and their configuration through iproute2;
- :mod:`.programs`, :mod:`.linkem`, :mod:`.traffic` — the native processes of a run;
- :mod:`.report` — the report, with the simulator's fields plus ``fidelity`` and ``backend``;
- :mod:`.runner` — one run, torn down in every case; :mod:`.cleanup` — ``mptcplab clean``.

The public entry point is :mod:`mptcplab.emu`.
"""
