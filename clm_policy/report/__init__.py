"""Formatters: results are data, rendered here for people (text) and machines (json, github,
sarif, junit). Nothing here decides anything."""
