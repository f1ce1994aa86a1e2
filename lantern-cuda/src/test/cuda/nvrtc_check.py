"""Compile every generated .cu in a folder with NVRTC (what the Lantern runtime does), in
parallel, and print one line per kernel. Usage: python3 nvrtc_check.py KERNEL_DIR"""
import ctypes, glob, os, sys
from concurrent.futures import ThreadPoolExecutor

LIB = None
for cand in ["libnvrtc.so.13", "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so"]:
    try:
        LIB = ctypes.CDLL(cand); break
    except OSError:
        pass
OPTS = [b"--gpu-architecture=sm_90", b"--std=c++17", b"-default-device", b"-I/usr/local/cuda/include"]


def compile_one(path):
    src = open(path, "rb").read()
    prog = ctypes.c_void_p()
    rc = LIB.nvrtcCreateProgram(ctypes.byref(prog), src, os.path.basename(path).encode(), 0, None, None)
    if rc != 0:
        return path, rc, "create failed"
    o = [b"--gpu-architecture=sm_90a" if b"wgmma" in src and x.startswith(b"--gpu") else x for x in OPTS]
    opts = (ctypes.c_char_p * len(o))(*o)
    rc = LIB.nvrtcCompileProgram(prog, len(o), opts)
    n = ctypes.c_size_t()
    LIB.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    LIB.nvrtcGetProgramLog(prog, buf)
    size = ctypes.c_size_t()
    LIB.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    LIB.nvrtcDestroyProgram(ctypes.byref(prog))
    return path, rc, buf.value.decode(errors="replace").strip()[:600] + f" cubin={size.value}B"


if __name__ == "__main__":
    if LIB is None:
        print("NVRTC not found"); sys.exit(0)
    files = sorted(glob.glob(os.path.join(sys.argv[1], "*.cu")))
    with ThreadPoolExecutor(8) as ex:
        res = list(ex.map(compile_one, files))
    bad = 0
    for p, rc, log in res:
        bad += rc != 0
        print(f"NVRTC {'OK ' if rc == 0 else 'ERR'} {os.path.basename(p)} {log if rc else log[-40:]}")
    print(f"NVRTC: {len(res) - bad}/{len(res)} compiled")
