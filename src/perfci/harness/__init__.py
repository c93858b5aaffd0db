"""Coverage validation harness: suites of simulated data sets, scored for every method.

A suite (a TOML file in ``validation/suites/``) names a population, a grid of cells (for
example sample size n by true proportion p), the methods to score, the replications and
resamples per scale, and a seed. In every cell all methods see the same simulated data
sets (common random numbers). The seed of a cell is
``SeedSequence(suite_seed, spawn_key=hash(cell))``: results do not depend on scheduling,
the number of workers or an interrupted and resumed run.

Each finished cell is written atomically to ``DIR/SUITE.cells/`` and a run resumes from
them; the result is an :class:`xarray.Dataset` written to ``DIR/SUITE.nc`` with variables
``coverage``, ``mc_se``, ``mean_half_width``, ``miss_low`` (interval below the truth),
``miss_high`` (interval above the truth), ``n_valid`` and ``n_flagged`` (MCMC fits that
failed their diagnostics), over the grid's dims and ``ci_method`` (with each method's
options as coordinates on it: ``family``, ``base_method``, ``design``, ``df_adjust``,
``scheme``, ``interval``, ``pseudo_count``, ``sampler``, ``estimand``).

The subpackage's modules, each importing only those listed before it:
:mod:`~perfci.harness.families` (the method families and their options),
:mod:`~perfci.harness.fields` (a typed suite key), :mod:`~perfci.harness.kinds` (the
population kinds: keys, grid dims, what each computes), :mod:`~perfci.harness.persons`
and :mod:`~perfci.harness.crossed_populations` (with :mod:`~perfci.harness.populations`,
the simulated populations), :mod:`~perfci.harness.schema` (suite files),
:mod:`~perfci.harness.storage` (atomic files, the output folder's lock),
:mod:`~perfci.harness.results` (result datasets), :mod:`~perfci.harness.kernels` and
:mod:`~perfci.harness.crossed_kernels` (scoring one cell), :mod:`~perfci.harness.execution`
(seeds, Dask, resuming) and :mod:`~perfci.harness.figures`.
"""

from .execution import (
    SCHEDULER_TIMEOUT,
    SchedulerError,
    check_scheduler,
    check_workers,
    compute_cell,
    run_suite,
)
from .populations import SAMPLINGS, confusion_probabilities, nested_population
from .results import OPTION_COORDS, RESULT_VARIABLES
from .schema import (
    Method,
    Scale,
    Suite,
    SuiteError,
    list_suites,
    load_suite,
    suite_dir,
    suite_dirs,
    suite_fingerprint,
)
from .storage import FolderInUseError, StaleLockWarning, WriteError, folder_lock

__all__ = [
    "OPTION_COORDS",
    "RESULT_VARIABLES",
    "SAMPLINGS",
    "SCHEDULER_TIMEOUT",
    "FolderInUseError",
    "Method",
    "Scale",
    "SchedulerError",
    "StaleLockWarning",
    "Suite",
    "SuiteError",
    "WriteError",
    "check_scheduler",
    "check_workers",
    "compute_cell",
    "folder_lock",
    "confusion_probabilities",
    "list_suites",
    "load_suite",
    "nested_population",
    "run_suite",
    "suite_dir",
    "suite_dirs",
    "suite_fingerprint",
]
