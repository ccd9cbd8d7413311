"""The perf lab: every profile under the same wrk load, with flame graphs and a report.

``python perf/run.py --profiles v1,demo`` (see :mod:`perf.run`).
"""
