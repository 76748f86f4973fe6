"""Campaign texts shared by the campaign tests."""

# Two paths, two quantitative factors, one qualitative factor; 1 s of simulated time per run.
SMALL_CAMPAIGN = """\
name = "small"
seed = 11
replications = 2
metrics = ["aggregation_benefit", "goodput_mbps"]

[design]
kind = "lhs"
points = 3

[scenario]
template = "two_path"
duration_s = 1.0
rtt_ms = [10.0, 30.0]

[factors.cap0]
low = 1.0
high = 20.0
log = true
param = "capacity_mbps[0]"

[factors.cap1]
low = 1.0
high = 20.0
param = "capacity_mbps[1]"

[factors.cc]
levels = ["lia", "olia"]
"""


# A published figure, appended to SMALL_CAMPAIGN by the cases that use one.
PUBLISHED = """
[[published]]
source = "a paper, Table 1"
metric = "goodput_mbps"
at = { cc = "lia" }
value = 5.0
"""
