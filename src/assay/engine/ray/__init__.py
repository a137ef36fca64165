"""The Ray executor: the same engine, run over a Ray cluster (`evaluate(..., executor=RayExecutor())`).

One module per part: `executor.py` (the option evaluate takes, and the whole picture), `driver.py`
(starts workers, hands out blocks of rows, collects), `worker.py` (the actor that scores rows),
`cluster.py` (connecting, checking the cluster, starting actors), `limits.py` (one rate limiter per
endpoint for every worker), `local.py` (one embedded judge per node), `shipping.py` (what goes to a
worker), `output.py` / `storage.py` / `parquet.py` (where results are written). Nothing here is
imported unless a run asks for Ray; `ray` itself is an optional extra.
"""
