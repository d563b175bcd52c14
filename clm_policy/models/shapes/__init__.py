"""The one declaration of each document, as pydantic models: the state, the decision and its
explain trace, the handoff manifest. From these come the published JSON schemas, the messages
that say where a file is wrong, and the plain classes the program works with
(:mod:`clm_policy.models.generate`).
"""
