"""File formats read as input: bounded text, strict JSON, YAML (events, a depth scan, documents
built with positions) and validation against JSON schemas with file:line:col; and Markdown
written for people on a forge (markdown: the Markdown-safe printer of others' text)."""
