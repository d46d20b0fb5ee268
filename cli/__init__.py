"""The `joulebench` command line (import, export, db info, app; run, idle and workloads come
from `runner.cli`). It sits above every other package."""
