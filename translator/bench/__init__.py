"""numba module + translation -> side-by-side GPU timings: the rules of a case (case.py), statistics (stats.py),
the GPU layer and CUDA-event timer (cuda.py), the table, JSON and chart (report.py), and the command
(cli.py)."""
