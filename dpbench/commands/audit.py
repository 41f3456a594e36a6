"""``dpbench audit``: privacy audits of registered mechanisms; see :mod:`dpbench.audit`.

Mechanisms that declare their releases get the white-box audit (certified Clopper–Pearson bound, Gaussian-DP
estimate with interval, exact ε of the releases as yardstick, and the integrity checks of the declarations: release
replay, recording invariance, measured sensitivity and scale, atoms, per-user noise, θ̂ as a second witness;
``--controls`` adds the 1.3×/3× copies); the others (external plug-ins) the black-box audit of θ̂ (``--mode blackbox``
forces it for every mechanism). The options become an :class:`~dpbench.audit.request.AuditRequest`;
:func:`~dpbench.audit.request.run_audit` does the rest.

Exit status: 0 when no honest private mechanism is flagged, 1 otherwise (with ``--broken``, 1 means the miscalibrated
black-box copy was caught; ``--controls`` never changes it), 2 for user errors (unknown mechanism, bad option, a
mechanism that cannot run on the audit dataset when audited alone).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from dpbench.audit.request import DOC_BEGIN, DOC_END, MODES, doc_markers, replace_doc_table

__all__ = ["DOC_BEGIN", "DOC_END", "MODES", "doc_markers", "parse_hyper", "register", "replace_doc_table"]


def parse_hyper(items: list[str]) -> dict[str, Any]:
    """``["T=2", "C=0.5"]`` → {"T": 2, "C": 0.5} (values parsed as YAML scalars)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--hyper expects key=value, got {item!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out


def register(app: typer.Typer) -> None:
    from dpbench.commands._common import user_errors

    @app.command(name="audit")
    @user_errors
    def audit_command(
        mechanisms: Annotated[
            list[str] | None, typer.Argument(help="registered mechanism(s) (or use --all)", show_default=False)
        ] = None,
        all_: Annotated[bool, typer.Option("--all", help="audit every registered mechanism")] = False,
        epsilon: Annotated[
            list[float] | None, typer.Option("--epsilon", "-e", help="claimed ε (repeatable; default 0.5 and 2)")
        ] = None,
        delta: Annotated[float, typer.Option(help="claimed δ")] = 1e-5,
        mode: Annotated[str, typer.Option(help="auto | whitebox | blackbox")] = "auto",
        runs: Annotated[int, typer.Option(help="white-box: batched runs per dataset of the pair")] = 1_000_000,
        pilot: Annotated[int, typer.Option(help="white-box: real paired runs per dataset (noise/model checks)")] = 200,
        replays: Annotated[
            int,
            typer.Option(
                help="white-box: real paired runs of the integrity checks (release replay, recording, "
                "sensitivity, atoms), once per mechanism at the first ε; 0 = off"
            ),
        ] = 10_000,
        replay_seconds: Annotated[
            float | None,
            typer.Option(
                help="white-box: stop the replays after this many CPU-seconds per mechanism "
                "(once 4 × pilot runs are done)"
            ),
        ] = 20.0,
        controls: Annotated[
            bool, typer.Option(help="white-box: also audit copies whose exact ε is 1.3× and 3× the claim")
        ] = False,
        n_jobs: Annotated[int, typer.Option(help="parallel worker processes for white-box audits")] = 1,
        trials: Annotated[int, typer.Option(help="black-box: runs per dataset of the pair")] = 20_000,
        seed: Annotated[int, typer.Option(help="seed of the pair and the runs")] = 0,
        n: Annotated[int | None, typer.Option(help="black-box: rows of the audit dataset (default 100)")] = None,
        d: Annotated[int | None, typer.Option(help="black-box: columns of the audit dataset (default 2)")] = None,
        confidence: Annotated[float, typer.Option(help="joint confidence of the lower bound")] = 0.95,
        broken: Annotated[
            str, typer.Option(help="black-box negative control: none | eps_x10 | no_bound | noise_div10")
        ] = "none",
        negative_controls: Annotated[
            bool, typer.Option(help="black-box: run every available negative control instead (exit code unaffected)")
        ] = False,
        max_seconds: Annotated[
            float | None, typer.Option(help="black-box cap per audit: fewer runs for slow mechanisms")
        ] = None,
        hyper: Annotated[
            list[str] | None, typer.Option(help="hyperparameter key=value (repeatable; single mechanism)")
        ] = None,
        plot: Annotated[Path | None, typer.Option(help="folder for histograms of the statistic (PNG)")] = None,
        write_doc: Annotated[
            Path | None, typer.Option(help="rewrite the generated audit table in this markdown file")
        ] = None,
        doc_block: Annotated[str, typer.Option(help="name of the generated block --write-doc replaces")] = "audit",
        run_n: Annotated[
            int,
            typer.Option(
                help="white-box: also audit at a run's own setting with this many rows (lowered when a fit is "
                "slow) and δ from --delta-rule; 0 = off"
            ),
        ] = 10_000,
        delta_rule: Annotated[
            str, typer.Option(help="δ of the run setting: '1/n^2', '1/n', '1/n^p' or a number (as in configs)")
        ] = "1/n^2",
    ) -> None:
        """Privacy audit: white-box (releases) or black-box (θ̂); exit 1 if an honest mechanism is flagged."""
        from dpbench.audit.request import AuditRequest, run_audit

        request = AuditRequest(
            mechanisms=tuple(mechanisms or ()), all=all_, epsilons=tuple(epsilon or (0.5, 2.0)), delta=delta,
            mode=mode, runs=runs, pilot=pilot, replays=replays, replay_seconds=replay_seconds, controls=controls,
            n_jobs=n_jobs, trials=trials, seed=seed, n=n, d=d, confidence=confidence, broken=broken,
            negative_controls=negative_controls, max_seconds=max_seconds,
            hyper=parse_hyper(hyper) if hyper else None, plot=plot, write_doc=write_doc, doc_block=doc_block,
            run_n=run_n, delta_rule=delta_rule,
            command="dpbench " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "dpbench audit",
        )  # fmt: skip
        outcome = run_audit(request, progress=lambda line: typer.echo(line, err=True))
        typer.echo(outcome.text())
        if write_doc is not None:
            typer.echo(f"wrote {write_doc}")
        code = outcome.exit_code(request)
        if code:
            raise typer.Exit(code=code)
