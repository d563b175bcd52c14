"""``python -m clm_policy`` runs the command-line interface."""

from clm_policy.cli.entry import main

if __name__ == "__main__":
    main()
