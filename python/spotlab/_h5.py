"""Low-level helpers: decoding what h5py returns (fixed-length byte strings, string arrays) and
the checks every file gets when it is opened (docs/results-format.md, docs/reports.md)."""
import os
import zlib

try:
    import h5py
except ImportError as e:  # not a pip dependency (pyproject.toml says why)
    raise ImportError("spotlab needs h5py: apt-get install python3-h5py (Debian), or pip install h5py") from e
import numpy as np
import pandas as pd

from ._errors import DamagedFile, FormatVersionError, NotSpotlabFile, ResultsNotFound

# The checksum block spotlab writes as the file's HDF5 user block (sim/h5mem.h)
CHECKSUM_MAGIC = b"spotlab-checksum 1 crc32 "
USERBLOCK = 512


def verify(path):
    """Checks a results file's checksum: True when it matches, False when the file has none
    (not written by spotlab, or by one before the checksum). Raises DamagedFile otherwise."""
    p = os.fspath(path)
    with open(p, "rb") as f:
        ub = f.read(USERBLOCK)
        if not ub.startswith(CHECKSUM_MAGIC):
            return False
        try:
            size_s, crc_s = ub[len(CHECKSUM_MAGIC):].split(b"\n", 1)[0].split()
            size, want = int(size_s), int(crc_s, 16)
        except ValueError:
            raise DamagedFile(f"{p}: damaged file: its checksum block is unreadable") from None
        have = os.fstat(f.fileno()).st_size
        if have != size:
            raise DamagedFile(f"{p}: damaged file: {have} bytes where it was written with {size} "
                              "(truncated or extended); spotlab.open(path, verify=False) reads it anyway")
        crc = 0
        for chunk in iter(lambda: f.read(1 << 20), b""):
            crc = zlib.crc32(chunk, crc)
    if crc != want:
        raise DamagedFile(f"{p}: damaged file: its checksum does not match (it changed after spotlab wrote it); "
                          "spotlab.open(path, verify=False) reads it anyway")
    return True

# The formats and versions this package reads: {format attribute: format_version}.
FORMATS = {"spotlab-results": 1, "spotlab-sweep": 1, "spotlab-experiment": 1}


def text(x):
    """A string attribute or scalar as str (h5py gives numpy bytes for fixed-length strings)."""
    if isinstance(x, np.ndarray) and x.shape == ():
        x = x[()]
    if isinstance(x, (bytes, np.bytes_)):
        return bytes(x).decode("utf-8", "replace")
    return x if isinstance(x, str) else str(x)


def texts(x):
    """A string-array attribute as a list of str."""
    if x is None:
        return []
    return [text(v) for v in np.asarray(x).ravel()]


def scalar(x):
    """A numeric attribute as a Python int or float (strings decoded)."""
    if isinstance(x, np.ndarray) and x.shape == ():
        x = x[()]
    if isinstance(x, (bytes, np.bytes_, str)):
        return text(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


def attrs(obj):
    """Every attribute of an HDF5 object, decoded."""
    out = {}
    for k, v in obj.attrs.items():
        if isinstance(v, np.ndarray) and v.shape != () and v.dtype.kind in "SO":
            out[k] = texts(v)
        else:
            out[k] = scalar(v)
    return out


def frame(arr):
    """A NumPy structured array (an HDF5 compound dataset) as a DataFrame with str columns."""
    df = pd.DataFrame(arr)
    for name in arr.dtype.names or ():
        if arr.dtype[name].kind == "S":
            df[name] = pd.Series(arr[name], index=df.index).str.decode("utf-8", "replace")
    return df


def open_checked(path, check=True):
    """Opens a spotlab file read-only after the checks of `spotlab report` (the checksum first,
    unless check is False). Returns (h5py.File, format). Raises ResultsNotFound, NotSpotlabFile
    (DamagedFile for a checksum that does not match) or FormatVersionError with the reason."""
    p = os.fspath(path)
    if not os.path.exists(p):
        raise ResultsNotFound(f"{p}: no such file")
    if os.path.isdir(p):
        raise NotSpotlabFile(f"{p}: is a folder, not a spotlab results file")
    if check:
        verify(p)
    try:
        is_h5 = h5py.is_hdf5(p)
    except OSError as e:
        raise NotSpotlabFile(f"{p}: cannot read it ({e})") from e
    if not is_h5:
        raise NotSpotlabFile(f"{p}: not an HDF5 file, or a damaged one")
    try:
        f = h5py.File(p, "r")
    except OSError as e:
        raise NotSpotlabFile(f"{p}: HDF5 cannot open it (damaged or truncated file?): {e}") from e
    try:
        if "format" not in f.attrs:
            raise NotSpotlabFile(f"{p}: an HDF5 file, but not a spotlab results file (no 'format' attribute)")
        fmt = text(f.attrs["format"])
        if fmt not in FORMATS:
            raise NotSpotlabFile(f"{p}: format '{fmt}' is neither a spotlab results file nor a sweep file")
        ver = scalar(f.attrs["format_version"]) if "format_version" in f.attrs else None
        if ver != FORMATS[fmt]:
            by = text(f.attrs["spotlab_version"]) if "spotlab_version" in f.attrs else "an unknown version"
            raise FormatVersionError(f"{p}: format version {ver} (written by spotlab {by}); "
                                     f"this package reads {fmt} version {FORMATS[fmt]}")
    except BaseException:
        f.close()
        raise
    return f, fmt


def require(f, path, names):
    """Raises NotSpotlabFile when one of the objects `names` is missing from file f."""
    for n in names:
        if n not in f:
            raise NotSpotlabFile(f"{path}: /{n} is missing (a damaged or incomplete file)")
