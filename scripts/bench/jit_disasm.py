"""Disassemble a C2-compiled method from -XX:+PrintAssembly output on a JDK without hsdis.

Without hsdis, HotSpot prints the machine code as hex words ("0x00007f..: 8984 2400 | c0fe ff55 | ...").
This takes the last C2 (tier 4, not OSR) compilation of METHOD ("Class::method") in LOG, joins its [MachCode]
bytes and runs objdump on them (Intel syntax, addresses as in the log).

  python3 scripts/bench/jit_disasm.py run.log Kernel6x16::run > k.s
"""
import re
import subprocess
import sys
import tempfile


def main(log, method):
    lines = open(log, errors="replace").read().split("\n")
    header = re.compile(r"Compiled method \(c2\)\s+\d+\s+\d+\s+4\s+\S*" + re.escape(method) + r" \(\d+ bytes\)")
    starts = [i for i, l in enumerate(lines) if header.search(l)]
    if not starts:
        sys.exit(f"jit_disasm: no C2 compilation of {method} in {log} (was -XX:CompileCommand=print,...{method} given?)")
    word = re.compile(r"^\s*0x([0-9a-f]+): ((?:[0-9a-f]{4} ?[0-9a-f]{0,4} ?\|? ?)+)\s*$")
    code, base = bytearray(), None
    for l in lines[starts[-1] + 1:]:
        if l.startswith("Compiled method") or l.startswith("[Exception Handler]"):
            break
        m = word.match(l)
        if m:
            base = base if base is not None else int(m.group(1), 16)
            code += bytes.fromhex(re.sub(r"[ |]", "", m.group(2)))
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(code)
        f.flush()
        subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", "-M", "intel",
                        f"--adjust-vma={hex(base)}", f.name], check=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
