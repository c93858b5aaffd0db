"""NumPy/SciPy-only core shared by every layer (no pandas, xarray or PyMC).

Validation, the registry of names and options, the resampling engine, replicates to
intervals, and the grid posterior live here; the public modules are thin layers on top.
"""
