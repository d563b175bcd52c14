"""``python -m clm_policy`` runs the command-line interface."""

from clm_policy.cli.main import main

if __name__ == "__main__":
    main()
