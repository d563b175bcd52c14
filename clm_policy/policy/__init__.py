"""Policies: load (extends, merge), the expression sandbox, and the deciding engine.

Import from the submodules (``clm_policy.policy.engine``, ``...compile``); this package
imports nothing itself so that the fast ``decide`` path loads only what it uses.
"""
