"""The outer control loop: an agent steps, the monitor measures, the policy decides, and
compactions and handoffs are committed to the memory repository."""
