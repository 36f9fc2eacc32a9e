"""ragen_probes: checks the orchestrator runs on a cluster, shipped with each job.

The orchestrator zips this package and sends it as a Ray `runtime_env` `py_modules` entry, so it
runs on any image that has Ray and numpy (torch is used when present): nothing of the orchestrator
or of its toy payload needs to be installed in the image.
"""
