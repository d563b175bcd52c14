"""The ground floor: errors, plain records, hashing, atomic and private files, progress, the
bundled resources and name suggestions. Imports nothing else of clm_policy."""
