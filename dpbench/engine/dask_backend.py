"""Run the runner's tasks on a Dask distributed cluster (``backend: dask`` in a config; ``pip install dpbench[dask]``).

The runner's tasks go through joblib as with the default ``loky`` backend, but joblib hands them to a
``dask.distributed.Client``:

* ``scheduler`` unset or ``local`` → a ``LocalCluster`` on loopback (127.0.0.1) with ``n_jobs`` single-threaded
  worker processes (``-1`` = all cores), started for the run and shut down after it;
* ``scheduler: tcp://host:8786`` (or ``tls://…``) → an existing cluster (started with ``dask scheduler`` and
  ``dask worker tcp://host:8786 --nthreads 1`` on each machine, or by dask-jobqueue / dask-kubernetes);
* ``scheduler: /shared/scheduler.json`` → the scheduler file written by ``dask scheduler --scheduler-file`` or
  dask-mpi, the usual set-up on HPC clusters.

Every worker needs the same dpbench version, any plug-in package, and the vendored ``datasets/`` folder (the
loaders read it; set ``DPBENCH_DATA_DIR`` if it lives elsewhere on the workers). Results do not depend on the backend:
each trial's noise is seeded from its coordinates, and the main process writes the shards and ``trials.csv``.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from dpbench.config import ConfigError
from dpbench.config.base import BaseConfig as Config

#: seconds to wait for a remote scheduler before giving up
CONNECT_TIMEOUT = 30
#: Dask settings of the local cluster: no statistical profiler (a 10 ms sampling thread per worker that nothing here
#: reads). For remote workers the same is DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False in their environment.
LOCAL_CLUSTER_CONFIG = {"distributed.worker.profile.enabled": False}


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ConfigError(
            "config field 'backend': dask needs Dask distributed; install it with pip install 'dpbench[dask]'"
        ) from None
    return distributed


def local_workers(n_jobs: int) -> int:
    """Worker processes of a local cluster: ``n_jobs``, or every core for ``-1``."""
    return max(1, os.cpu_count() or 1) if n_jobs == -1 else max(1, n_jobs)


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT while the local cluster starts its processes: they inherit the setting, so a terminal's Ctrl-C
    (sent to the whole process group) reaches only the main process, which stops the run with one line and closes
    the cluster — instead of one KeyboardInterrupt traceback per worker."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def dask_client(scheduler: str | None, n_jobs: int) -> Iterator[Any]:
    """A connected ``distributed.Client`` for ``scheduler`` (see the module docstring); closed on exit."""
    distributed = _distributed()
    if scheduler in (None, "local"):
        import dask

        with dask.config.set(LOCAL_CLUSTER_CONFIG), sigint_ignored():  # its processes inherit it (see below)
            cluster = distributed.LocalCluster(
                n_workers=local_workers(n_jobs),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",  # HTTP/diagnostics on a free loopback port
                silence_logs=logging.ERROR,
            )
        with cluster, distributed.Client(cluster) as client:
            yield client
        return
    if scheduler.endswith(".json"):
        if not os.path.isfile(scheduler):
            raise ConfigError(f"config field 'scheduler': scheduler file not found: {scheduler}")
        client = distributed.Client(scheduler_file=scheduler, timeout=CONNECT_TIMEOUT)
    else:
        try:
            client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
        except OSError as err:
            raise ConfigError(f"config field 'scheduler': cannot reach {scheduler}: {err}") from None
    with client:
        yield client


def execute_dask(tasks: list, config: Config, n_jobs: int, run_one: Callable[[Any, Config], Any]) -> Iterator[Any]:
    """Yield ``run_one(task, config)`` for every task as Dask workers finish them (any order)."""
    from joblib import Parallel, delayed, parallel_config

    if not tasks:
        return
    with dask_client(config.scheduler, n_jobs) as client, parallel_config(backend="dask", client=client):
        parallel = Parallel(n_jobs=-1, return_as="generator_unordered")
        outputs = parallel(delayed(run_one)(task, config) for task in tasks)
        try:
            yield from outputs
        finally:  # stopped early (Ctrl-C, a failed block): cancel the rest now
            outputs.close()
