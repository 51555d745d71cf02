"""Executes docs/example.ipynb with nbclient (Debian's python3-nbclient) as ctest's
`python_notebook` test, and checks that every code cell runs and prints what the committed
notebook shows, so its numbers cannot drift from what the code gives.

    python3 python/tests/run_notebook.py            # check (the results go to a temporary folder)
    python3 python/tests/run_notebook.py --update   # rewrite docs/example.ipynb with fresh outputs

Skips (exit 77) when h5py or pandas are missing."""
import argparse
import importlib.util
import os
import sys
import tempfile

SKIP = 77
here = os.path.dirname(os.path.abspath(__file__))
src = os.environ.get("SPOTLAB_SOURCE_DIR", os.path.dirname(os.path.dirname(here)))

missing = [m for m in ("h5py", "pandas") if importlib.util.find_spec(m) is None]
if missing:
    print(f"SKIP: {sys.executable} has no {' or '.join(missing)} (apt-get install python3-h5py python3-pandas)")
    sys.exit(SKIP)

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402
from nbclient.exceptions import CellExecutionError  # noqa: E402


def texts(cell):
    """What a code cell shows as text: streams and text/plain results, in order."""
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o.get("text", ""))
        elif o.get("output_type") in ("execute_result", "display_data"):
            out.append(o.get("data", {}).get("text/plain", ""))
        elif o.get("output_type") == "error":
            out.append(f"{o.get('ename')}: {o.get('evalue')}")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--update", action="store_true", help="write the fresh outputs into the notebook")
    ap.add_argument("--notebook", default=os.path.join(src, "docs", "example.ipynb"))
    a = ap.parse_args()
    nb = nbformat.read(a.notebook, as_version=4)
    committed = [texts(c) for c in nb.cells if c.cell_type == "code"]
    # the kernel (Debian's python3 kernel spec: /usr/bin/python3) imports spotlab from this tree
    os.environ["PYTHONPATH"] = os.path.join(src, "python") + os.pathsep + os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # ipykernel's debugger note on frozen modules
    with tempfile.TemporaryDirectory(prefix="spotlab-nb-") as tmp:
        if not a.update:
            os.environ["SPOTLAB_EXAMPLE_OUT"] = os.path.join(tmp, "henry-30d.h5")
        client = NotebookClient(nb, timeout=120, kernel_name="python3", record_timing=False,
                                resources={"metadata": {"path": os.path.dirname(a.notebook)}})
        try:
            client.execute()
        except CellExecutionError as e:
            print(f"{a.notebook}: a cell failed:\n{e}")
            return 1
    fresh = [texts(c) for c in nb.cells if c.cell_type == "code"]
    if a.update:
        for c in nb.cells:
            c.metadata.pop("execution", None)  # timings would change the file at every update
        nbformat.write(nb, a.notebook)
        print(f"{a.notebook}: outputs rewritten")
        return 0
    bad = [i for i, (c, f) in enumerate(zip(committed, fresh)) if c != f]
    for i in bad:
        print(f"code cell {i}: the notebook shows\n{committed[i]}\nbut a fresh run gives\n{fresh[i]}")
    if bad:
        print(f"{a.notebook}: outputs differ from a fresh run; if the change is meant, rewrite them with "
              f"python3 python/tests/run_notebook.py --update")
        return 1
    print(f"{a.notebook}: {len(fresh)} code cells ran; outputs as committed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
