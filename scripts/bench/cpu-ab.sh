#!/usr/bin/env bash
# A/B of two (or more) Lantern builds on the CPU, in one JVM: forwards interleaved, so a shared machine's load
# falls on both alike (separate bench runs on the 2-core development machine swung by ±15 %; this, by 1-3 %).
#
#   ./mvnw -B -q -DskipTests -Dcyclonedx.skip=true -pl lantern-cli -am package && cp -r lantern-cli/target/lib /tmp/ab/base/
#   (change, build again) && cp -r lantern-cli/target/lib /tmp/ab/new/
#   scripts/bench/cpu-ab.sh cpu-small /tmp/ab/base /tmp/ab/new                 # 1 thread, 45 s: CPU ms per forward
#   AB_THREADS=2 AB_WALL=1 AB_SECONDS=60 scripts/bench/cpu-ab.sh encoder-small /tmp/ab/base /tmp/ab/new
#   scripts/bench/cpu-ab.sh gpt2:/tmp/lantern-bench/gpt2-small/model.onnx /tmp/ab/base /tmp/ab/new    # gpt2b8: for batch 8
#   scripts/bench/cpu-ab.sh gemm:1024x1024x1024 /tmp/ab/base /tmp/ab/new      # one f32 GEMM (M×K×N), B not prepacked
#
# Each DIR holds lib/*.jar (lantern-core, lantern-bench and their dependencies). AB_JAVA_OPTS adds JVM options, e.g. for
# perf: AB_JAVA_OPTS="-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit" perf record -- scripts/bench/cpu-ab.sh ...
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${JAVA_HOME:=/usr/lib/jvm/temurin-25-jdk-amd64}"
target="$1"; shift
classes="$(mktemp -d)"
trap 'rm -rf "$classes"' EXIT
"$JAVA_HOME/bin/javac" -nowarn -d "$classes" --add-modules=jdk.incubator.vector -cp "$1/lib/*" scripts/bench/cpu-ab/*.java 2>&1 \
  | grep -v 'incubator' || true
"$JAVA_HOME/bin/java" ${AB_JAVA_OPTS:-} --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC -Xss8m \
  -Dlantern.cpu.threads="${AB_THREADS:-1}" ${AB_WALL:+-Dab.wall=1} -cp "$classes" Ab "$target" "${AB_SECONDS:-45}" "$classes" "$@" 2>&1 \
  | grep -v 'WARNING: Using incubator'
