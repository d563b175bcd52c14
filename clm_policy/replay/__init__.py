"""Learning from history: recorded decisions and real past sessions decided again under another
policy (``replay``), and a profile's thresholds proposed from them (``calibrate``).

- :mod:`~clm_policy.replay.records`: the decisions a memory repository recorded, read from git;
- :mod:`~clm_policy.replay.memory`: ``replay --memory``, what would change;
- :mod:`~clm_policy.replay.transcripts`: ``replay --transcripts``, where a policy would first
  have acted in real sessions, beside the agent's own compactions;
- :mod:`~clm_policy.replay.calibrate`: ``calibrate``, thresholds from trouble points;
- :mod:`~clm_policy.replay.thresholds`: writing two thresholds into a policy file in place;
- :mod:`~clm_policy.replay.render`: the text reports (the JSON ones are the results' own).
"""
