#!/usr/bin/env bash
# The GEMM micro-kernel alone against candidate register tiles (gemm-kernel/*.java), one thread, interleaved in one
# JVM, GFLOP per second of thread CPU time (other processes' load on a shared machine falls on every variant alike).
# With GEMM_KERNEL_ASM=Class::method, also writes that method's C2 code, disassembled, to /tmp/gemm-kernel-<method>.s
# (no hsdis needed: jit_disasm.py decodes -XX:+PrintAssembly's hex with objdump), to look for spills
# (vmovdqu to or from [rsp+...] inside the k loop) and bounds checks (cmp; jae) left in it.
# With 512-bit vectors only the production 8 x 32 tile (GemmKernel.vector8Packed) is timed: the candidates are 256-bit
# designs (113.9 GFLOP/s on one Zen 4 core, 2026-12-04, against 110 for twelve independent FMA chains in C).
#
#   ./mvnw -q -pl lantern-core -am compile -Dcyclonedx.skip=true
#   scripts/bench/gemm-kernel.sh 10                       # every variant, 10 rounds
#   scripts/bench/gemm-kernel.sh 10 6x16                  # the production 4x16 and 6x16 only
#   GEMM_KERNEL_ASM=Kernel6x16::run scripts/bench/gemm-kernel.sh 3 6x16
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${JAVA_HOME:=/usr/lib/jvm/temurin-25-jdk-amd64}"
classes="$(mktemp -d)"
trap 'rm -rf "$classes"' EXIT
"$JAVA_HOME/bin/javac" -nowarn --add-modules=jdk.incubator.vector -cp lantern-core/target/classes -d "$classes" \
  scripts/bench/gemm-kernel/*.java 2>&1 | grep -v 'incubator' || true
asm=()
if [[ -n "${GEMM_KERNEL_ASM:-}" ]]; then
  asm=(-XX:+UnlockDiagnosticVMOptions "-XX:CompileCommand=print,dev.lantern.cpu.$GEMM_KERNEL_ASM")
fi
log="$classes/run.log"
"$JAVA_HOME/bin/java" -XX:+UseParallelGC --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED "${asm[@]}" \
  -cp "$classes:lantern-core/target/classes" dev.lantern.cpu.KernelAb "$@" > "$log" 2>&1 || { tail -20 "$log"; exit 1; }
grep -E 'GFLOP/s' "$log"
if [[ -n "${GEMM_KERNEL_ASM:-}" ]]; then
  out="/tmp/gemm-kernel-${GEMM_KERNEL_ASM/::/-}.s"
  python3 scripts/bench/jit_disasm.py "$log" "${GEMM_KERNEL_ASM##*.}" > "$out"
  echo "C2 code of $GEMM_KERNEL_ASM: $out ($(grep -c 'rsp' "$out") instructions touch the stack)"
fi
