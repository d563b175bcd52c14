"""The outer control loop (an agent steps, the monitor measures, the policy decides, the
memory repository commits), and what the commands built on it decide: a run's plan and
resume, the sessions' overview, a person's signal to a session."""
