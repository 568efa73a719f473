# SPDX-License-Identifier: MIT
"""fbwire_compare - the one measurement tool of fbwire (docs/compare.md).

One module per concern: workloads (which sysbench scripts, how many tables), sysbench (its output
parsed), stats (medians and ranges), builds (where the fbwire programs are), targets (engines,
drivers, connection options), record (one run's JSON), summary (tables), charts, runner (the
comparison), presets (the older measurement scripts as settings of this tool), cli.
"""
