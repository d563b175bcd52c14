"""``python -m clm_policy`` runs the command-line interface."""

from clm_policy.cli.entry import program

if __name__ == "__main__":
    program()
