"""Configuration: the project's ``.clm-policy.yaml`` (:mod:`.project`)."""
