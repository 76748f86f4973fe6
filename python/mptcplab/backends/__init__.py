"""Backends that run a scenario: the simulator (``mptcplab.sim``), the emulator
(:mod:`mptcplab.backends.emu`, public entry point ``mptcplab.emu``) and the kernel's coupled
congestion controls used by the emulator (:mod:`mptcplab.backends.kernel_cc`)."""
