"""Git-backed memory: the store, the git write path, redaction."""
