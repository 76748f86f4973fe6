"""Sub-commands of the mptcplab CLI; each module exposes ``register(app)``."""
