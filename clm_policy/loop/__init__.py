"""The outer control loop: an agent steps, the monitor measures, the policy decides, and
compactions and handoffs are committed to the memory repository.

What the commands built on it decide lives here too, where a hook or the Python API reaches
it: a run's plan, resume and overrides (runs), the sessions' overview (status), a person's
signal to a session (signals)."""
