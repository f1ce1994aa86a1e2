#!/usr/bin/env bash
# Builds the folder the GPU harness runs from: every BenchmarkKernels kernel (plus the attention
# tile sweep) as .cu, its sm_90 (wgmma kernels: sm_90a) cubin (nvcc -O3, no -lineinfo) and manifest.json, with the
# harness scripts beside them. Run from the repository root after `./mvnw -pl lantern-cuda -am
# test-compile`:
#     lantern-cuda/src/test/cuda/prepare.sh /work/main/.gpu-codegen
# then on the GPU machine:
#     cd .gpu-codegen && python3 nvrtc_check.py kernels && python3 harness.py kernels $OUT/results.json
set -euo pipefail
dest=${1:?usage: prepare.sh DEST_DIR}
java=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
cp=lantern-cuda/target/classes:lantern-cuda/target/test-classes:lantern-core/target/classes
rm -rf "$dest" && mkdir -p "$dest/kernels"
"$java" -cp "$cp" dev.lantern.cuda.codegen.DumpKernels "$dest/kernels"
# wgmma kernels use sm_90a-only instructions: built for that arch-specific target
ls "$dest"/kernels/*.cu | xargs -P "$(nproc)" -I{} sh -c \
  'if grep -q "wgmma" "$1"; then a="-gencode=arch=compute_90a,code=sm_90a"; else a="-arch=sm_90"; fi;
   nvcc $a -cubin -O3 -std=c++17 -o "${1%.cu}.cubin" "$1"' _ {}
cp lantern-cuda/src/test/cuda/harness.py lantern-cuda/src/test/cuda/nvrtc_check.py "$dest/"
echo "prepared $(ls "$dest"/kernels/*.cubin | wc -l) kernels in $dest"
