"""Faults replayed against real processes, and the processes a run leaves behind.

The fault tests assert on these replays and `python -m benchmarks --only faults` tabulates them; neither of the two
imports the other. `foreign_server.py` and `env_server.py` are the stand-in servers the replays start.
"""
