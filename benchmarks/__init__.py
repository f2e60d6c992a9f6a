"""The lab's benchmarks: tracing, model, canonical-run, course, setup, memory and workshop figures in one run.

Run them with `python -m benchmarks` (about 4 minutes), `--quick` (about 1 minute) or `--setup`
(adds the slow fresh-clone measurement). `benchmarks/README.md` explains every figure.
"""

__all__: list[str] = []
