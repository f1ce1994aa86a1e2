package dev.lantern.cuda.lower;

import dev.lantern.engine.NondeterministicKernelException;
import dev.lantern.frontend.nn.BlockConfig;
import org.junit.jupiter.api.Test;

import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Strict mode's atomics check: it refuses atomics by name, and passes every kernel Lantern generates today. */
class StrictKernelsTest {
    @Test
    void everyKernelOfEveryBenchmarkBlockIsFreeOfAtomics() {
        TreeSet<String> checked = new TreeSet<>();
        for (BlockConfig c : BlockConfig.ALL) {
            for (boolean fuse : new boolean[] {true, false}) {
                for (Step s : CudaLoweringTest.lower(c, fuse).steps()) {
                    if (s instanceof Step.Launch l) {
                        StrictKernels.check(l.source());
                        checked.add(l.source().entry());
                    }
                }
            }
        }
        assertTrue(checked.size() >= 10, "kernels: " + checked);
    }

    @Test
    void anAtomicInCudaCOrPtxIsRefusedNamingTheKernel() {
        String cuda = """
                extern "C" __global__ void lt_rowsum(const float* x, float* out, long n) {
                  float v = x[threadIdx.x];
                  atomicAdd (&out[0], v);
                }
                """;
        NondeterministicKernelException e = assertThrows(NondeterministicKernelException.class, () -> StrictKernels.check("lt_rowsum", cuda));
        assertEquals("lt_rowsum", e.kernel());
        assertTrue(e.getMessage().contains("'atomicAdd' at line 3"), e.getMessage());
        String ptx = "asm volatile(\"red.global.add.f32 [%0], %1;\" :: \"l\"(p), \"f\"(v));";
        assertThrows(NondeterministicKernelException.class, () -> StrictKernels.check("lt_ptx", ptx));
        // the tensor-memory unit's reduce-add into global memory is an atomic too
        String bulk = "asm volatile(\"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], 256;\" :: \"l\"(g), \"r\"(s));";
        assertThrows(NondeterministicKernelException.class, () -> StrictKernels.check("lt_bulk", bulk));
        // names that merely contain the letters are not atomics
        StrictKernels.check("lt_ok", "float atomicity = 1; int reduced = red_count; float bored = 0;");
    }
}
