#!/usr/bin/env python3
"""Writes the safetensors fixtures that SafetensorsPythonTest reads, with the reference
implementation (pip package `safetensors`, 0.8.0 when these were made). Run once, from this
folder, after a change to the cases; the outputs are committed, so no Python runs at test time.

  python3 make-fixtures.py

Outputs:
  python-all.safetensors   every dtype the Java reader exposes, seeded random values, a scalar,
                           an empty tensor, a non-ASCII name, one metadata key
  python-all.json          per tensor: dtype, shape, sha256 of its bytes, and for float dtypes
                           the values as float64 (what the bytes mean, independent of the reader)
"""
import ctypes
import hashlib
import json
import struct

import numpy as np
import safetensors
from safetensors import _safetensors_rust as rust

rng = np.random.default_rng(20261201)

arrays = {
    "f64.w": rng.standard_normal((3, 5)).astype(np.float64),
    "f32.w": rng.standard_normal((4, 6)).astype(np.float32),
    "f16.w": rng.standard_normal((2, 3, 4)).astype(np.float16),
    "i64.ids": rng.integers(-2**40, 2**40, (7,), dtype=np.int64),
    "i32.ids": rng.integers(-2**30, 2**30, (2, 5), dtype=np.int32),
    "i16.x": rng.integers(-2**14, 2**14, (9,), dtype=np.int16),
    "i8.x": rng.integers(-128, 128, (3, 3), dtype=np.int8),
    "u8.x": rng.integers(0, 256, (11,), dtype=np.uint8),
    "u16.x": rng.integers(0, 2**16, (3,), dtype=np.uint16),
    "u32.x": rng.integers(0, 2**32, (3,), dtype=np.uint32),
    "u64.x": rng.integers(0, 2**63, (2,), dtype=np.uint64),
    "bool.mask": rng.integers(0, 2, (2, 4)).astype(np.bool_),
    "scalar": np.array(1.5, dtype=np.float32),
    "empty": np.zeros((0, 4), dtype=np.float32),
    "名前.é": rng.standard_normal((2,)).astype(np.float32),
}

# bf16 has no numpy type: the top halves of f32 values, rounded to nearest even.
f32 = rng.standard_normal((3, 4)).astype(np.float32)
bits = f32.view(np.uint32).astype(np.uint64)
bf16 = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
raw = {"bf16.w": ("bfloat16", [3, 4], bf16.tobytes())}

buffers = []
specs = {}
for name, a in arrays.items():
    data = np.ascontiguousarray(a).tobytes()
    buf = ctypes.create_string_buffer(data, len(data)) if data else ctypes.create_string_buffer(1)
    buffers.append(buf)
    dtype = {"float64": "float64", "float32": "float32", "float16": "float16", "int64": "int64",
             "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "uint16": "uint16",
             "uint32": "uint32", "uint64": "uint64", "bool": "bool"}[str(a.dtype)]
    specs[name] = rust.TensorSpec(dtype=dtype, shape=list(a.shape), data_ptr=ctypes.addressof(buf), data_len=len(data))
for name, (dtype, shape, data) in raw.items():
    buf = ctypes.create_string_buffer(data, len(data))
    buffers.append(buf)
    specs[name] = rust.TensorSpec(dtype=dtype, shape=shape, data_ptr=ctypes.addressof(buf), data_len=len(data))

blob = rust.serialize(specs, {"format": "np"})
with open("python-all.safetensors", "wb") as f:
    f.write(blob)

n = struct.unpack("<Q", blob[:8])[0]
header = json.loads(blob[8:8 + n])
expected = {"safetensors_version": safetensors.__version__, "metadata": header.pop("__metadata__"), "tensors": {}}
for name, info in header.items():
    begin, end = info["data_offsets"]
    data = blob[8 + n + begin:8 + n + end]
    entry = {"dtype": info["dtype"], "shape": info["shape"], "sha256": hashlib.sha256(data).hexdigest()}
    if name in arrays and arrays[name].dtype.kind == "f":
        entry["values"] = [float(v) for v in arrays[name].astype(np.float64).ravel()]
    if name == "bf16.w":
        entry["values"] = [float(v) for v in (bf16.astype(np.uint32) << 16).view(np.float32).astype(np.float64).ravel()]
    expected["tensors"][name] = entry
with open("python-all.json", "w") as f:
    json.dump(expected, f, indent=1, ensure_ascii=False)
    f.write("\n")
