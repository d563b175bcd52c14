"""Experiments: arms (policy x profile x memory backend x summarizer) played on the same
workloads, each arm in its own memory repository, compared with bootstrap intervals
(``clm-policy experiment FILE``; docs/experiments.md).

load (the file, checked) -> workloads (scenarios, recorded runs, transcripts as traces) ->
runner (the loop, per arm) -> stats (metrics, paired bootstrap) -> render (text, JSON), html.
"""
