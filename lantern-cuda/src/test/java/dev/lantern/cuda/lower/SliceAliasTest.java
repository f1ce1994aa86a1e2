package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.StridedCopySpec;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.IrParser;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * GPT-2's q, k and v are column blocks of one q|k|v projection: the fused attention reads them in
 * place (pointer offsets and the source's row stride), with no copy; a slice anything else reads
 * stays a copy.
 */
class SliceAliasTest {
    /** b=3, s=37, heads=4, d=16: h=64, q|k|v 192 wide; {@code extra} adds a second reader of k. */
    static String graph(boolean extra) {
        return """
                graph @qkv {
                  %x = input {name="x"} : bf16[3,37,64]
                  %w = param {name="w"} : bf16[64,192]
                  %qkv = matmul(%x, %w) : bf16[3,37,192]
                  %q0 = slice(%qkv) {axis=2, start=0, end=64} : bf16[3,37,64]
                  %k0 = slice(%qkv) {axis=2, start=64, end=128} : bf16[3,37,64]
                  %v0 = slice(%qkv) {axis=2, start=128, end=192} : bf16[3,37,64]
                  %q1 = reshape(%q0) {shape=[3,37,4,16]} : bf16[3,37,4,16]
                  %k1 = reshape(%k0) {shape=[3,37,4,16]} : bf16[3,37,4,16]
                  %v1 = reshape(%v0) {shape=[3,37,4,16]} : bf16[3,37,4,16]
                  %q = permute(%q1) {perm=[0,2,1,3]} : bf16[3,4,37,16]
                  %k = permute(%k1) {perm=[0,2,1,3]} : bf16[3,4,37,16]
                  %v = permute(%v1) {perm=[0,2,1,3]} : bf16[3,4,37,16]
                  %s = matmul(%q, %k) {transpose_b=true} : bf16[3,4,37,37]
                  %p = softmax(%s) {causal=true, scale=0.25} : bf16[3,4,37,37]
                  %o = matmul(%p, %v) : bf16[3,4,37,16]
                """ + (extra ? """
                  %e = add(%k0, %k0) : bf16[3,37,64]
                  %t = permute(%o) {perm=[0,2,1,3]} : bf16[3,37,4,16]
                  %r = reshape(%t) {shape=[3,37,64]} : bf16[3,37,64]
                  %y = add(%r, %e) : bf16[3,37,64]
                  return %y
                }
                """ : """
                  return %o
                }
                """);
    }

    static CudaLowering.Lowered lower(boolean extra) {
        CompiledModel m = Compiler.compile(IrParser.parse(graph(extra)), CompileOptions.defaults().withTarget("cuda"));
        return CudaLowering.lower(m, CudaTarget.H200); // runs the launch contract
    }

    static List<Step.Launch> launches(CudaLowering.Lowered l) {
        return l.steps().stream().filter(s -> s instanceof Step.Launch).map(s -> (Step.Launch) s).toList();
    }

    @Test
    void attentionReadsTheQkvColumnsInPlace() {
        CudaLowering.Lowered l = lower(false);
        List<Step.Launch> launches = launches(l);
        assertTrue(launches.stream().noneMatch(x -> x.spec() instanceof StridedCopySpec), "no slice copy: " + launches);
        Step.Launch att = launches.stream().filter(x -> x.source().entry().startsWith("lt_attention")).findFirst().orElseThrow();
        Step.Gemm gemm = l.steps().stream().filter(s -> s instanceof Step.Gemm).map(s -> (Step.Gemm) s).findFirst().orElseThrow();
        for (int i = 0; i < 3; i++) {
            Step.Ptr p = (Step.Ptr) att.args().get(i);
            assertEquals(gemm.d(), p.buf(), "q, k, v read from the projection's output");
            assertEquals(i * 64L * 2, p.offset(), "column block " + i);
        }
        // the strides the kernel gets: batch 37·192, head 16, seq 192, per operand
        String args = att.args().toString();
        assertTrue(args.contains("I64[v=7104], I64[v=16], I64[v=192]"), args);
    }

    @Test
    void aSliceAnotherKernelReadsStaysACopy() {
        List<Step.Launch> launches = launches(lower(true));
        long copies = launches.stream().filter(x -> x.spec() instanceof StridedCopySpec).count();
        assertEquals(1, copies, "k, which an add also reads, is copied; q and v are read in place: " + launches);
    }
}
