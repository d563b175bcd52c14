"""The ground floor: errors, plain records, hashing, atomic and private files, progress, the
bundled resources, name suggestions, the one printer for terminals (termsafe), credentials
masked in URLs, and standard input read with a bound. Imports nothing else of clm_policy."""
