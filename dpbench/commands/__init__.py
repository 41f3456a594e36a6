"""Extra CLI commands, one module each; every module defines ``register(app: typer.Typer) -> None``.

``dpbench.cli`` (the face) imports every module here at start-up, so a new command never needs an edit of ``cli.py``.
"""
