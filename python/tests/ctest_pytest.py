"""ctest's entry to the Python package's tests: skips (exit 77, ctest's SKIP_RETURN_CODE) when
h5py or pandas are missing, otherwise runs pytest on python/tests and returns its status, so a
missing pytest, a test that fails or an empty collection (status 5) all fail."""
import importlib.util
import os
import sys

SKIP = 77
here = os.path.dirname(os.path.abspath(__file__))

missing = [m for m in ("h5py", "pandas") if importlib.util.find_spec(m) is None]
if missing:
    print(f"SKIP: {sys.executable} has no {' or '.join(missing)} "
          "(Debian: apt-get install python3-h5py python3-pandas, as scripts/setup.sh does)")
    sys.exit(SKIP)

import pytest  # noqa: E402  (after the check: a missing pytest is a failure, not a skip)

args = sys.argv[1:] or [here]
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-rs", *args]))
