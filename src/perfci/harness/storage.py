"""Atomic files: finished cells and result datasets are complete or absent, never torn."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import xarray as xr


def _cell_path(folder: Path, cell: dict) -> Path:
    key = "_".join(f"{k}-{cell[k]}" for k in sorted(cell))
    return folder / f"{key}.npy"


def _write_atomic(path: Path, array: np.ndarray) -> None:
    """Write to a temporary file in the same folder, then rename: never a partial file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, array)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_dataset(dataset: xr.Dataset, target: Path) -> None:
    """Write netCDF to a temporary file, then rename: a failed write leaves no result."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".nc.tmp")
    os.close(fd)
    try:
        dataset.to_netcdf(tmp, engine="h5netcdf")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
