"""spotlab: read the results of the spotlab simulator into pandas, and run it.

    import spotlab
    r = spotlab.open("results/default.h5")      # a results file (or a sweep file)
    r.metrics()                                  # rep, name, ..., value, unit (long form)
    r.summary()                                  # mean, sd, 95% CI per metric
    r.table("providers")                         # every replication, with a `rep` column
                                                 # (the names: spotlab.names.TABLES, .SERIES)
    r.series("rented_gpu_ms_by_region")          # rep, bin, bin_start_s, bin_start_h, one column per region
    r = spotlab.run("scenarios/default.cfg", params={"run.end": "1d"})

Units of every column are in df.attrs["units"]. docs/python.md has the whole story.
"""
from ._errors import (BinaryNotFound, DamagedFile, FormatVersionError, NotInFile, NotSpotlabFile, ResultsNotFound, RunError,
                      SpotlabError)
from ._h5 import FORMATS, open_checked, verify
from ._results import Experiment, Results, Sweep, split_metric
from ._run import experiment, find_binary, param_value, run, sweep
from . import names

__version__ = "0.1.0"
__all__ = ["open", "run", "sweep", "find_binary", "param_value", "split_metric", "Results", "Sweep", "FORMATS",
           "SpotlabError", "ResultsNotFound", "NotSpotlabFile", "FormatVersionError", "NotInFile", "BinaryNotFound",
           "RunError", "DamagedFile", "verify", "Experiment", "experiment", "names"]


def open(path, verify=True):  # noqa: A001 - spotlab.open is the package's entry point, as h5py.File or gzip.open
    """Opens a spotlab results file (spotlab.Results), sweep file (spotlab.Sweep) or experiment
    file (spotlab.Experiment), read-only.

    Raises ResultsNotFound (a FileNotFoundError) when there is no such file, NotSpotlabFile when
    it is not HDF5, damaged, or HDF5 without spotlab's format attribute (DamagedFile when its
    checksum does not match: verify=False skips that check, for a file edited on purpose),
    FormatVersionError when it is of a format version this package does not read."""
    f, fmt = open_checked(path, verify)
    try:
        cls = {"spotlab-results": Results, "spotlab-sweep": Sweep, "spotlab-experiment": Experiment}[fmt]
        return cls(f, path)
    except BaseException:
        f.close()
        raise
