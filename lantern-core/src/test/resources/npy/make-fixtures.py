#!/usr/bin/env python3
"""Writes the .npy fixtures that NpyTest reads, with numpy itself (2.4.6 when these were made).
Run once, from this folder, after a change to the cases; the outputs are committed, so no Python
runs at test time.

  python3 make-fixtures.py

Outputs, for each case NAME:
  NAME.npy      written by numpy.save (or numpy.lib.format.write_array for another version)
  NAME.values   the elements in C order as float64 repr, one a line (what the bytes mean,
                independent of the reader); absent for the cases the reader must refuse
"""
import numpy as np
from numpy.lib import format as npf

rng = np.random.default_rng(20261201)

readable = {
    "f32": rng.standard_normal((3, 4, 5)).astype(np.float32),
    "f16": rng.standard_normal((2, 7)).astype(np.float16),
    "f64": rng.standard_normal((4, 3)).astype(np.float64),
    "i64": rng.integers(-2**40, 2**40, (6,), dtype=np.int64),
    "i32": rng.integers(-2**30, 2**30, (2, 2), dtype=np.int32),
    "bool": np.array([True, False, True, True]),
    "scalar": np.float32(2.5).reshape(()),
    "empty": np.zeros((0, 3), dtype=np.float32),
}
for name, a in readable.items():
    np.save(name + ".npy", a)
    with open(name + ".values", "w") as f:
        for v in a.reshape(-1).tolist():
            f.write(repr(float(v)) + "\n")

# the same f32 array in format versions 2.0 and 3.0
for version in [(2, 0), (3, 0)]:
    with open("f32-v%d.npy" % version[0], "wb") as f:
        npf.write_array(f, readable["f32"], version=version)

# valid numpy that Lantern refuses
np.save("fortran.npy", np.asfortranarray(rng.standard_normal((3, 4)).astype(np.float32)))
np.save("big-endian.npy", rng.standard_normal((3,)).astype(">f4"))
np.save("structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
np.save("complex.npy", np.zeros(2, dtype=np.complex64))
