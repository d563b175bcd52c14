"""The command-line interface: the only code that prints or exits."""
