"""``python -m dpbench`` runs the same command-line app as the ``dpbench`` console script."""

from dpbench.cli import main

if __name__ == "__main__":  # pragma: no cover - exercised by tests/test_cli.py through a subprocess
    main()
