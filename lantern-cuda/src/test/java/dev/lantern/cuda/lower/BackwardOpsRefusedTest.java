package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.IrParser;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ops that autodiff emits have no CUDA kernels yet (backward graphs run on the CPU): lowering
 * one for the GPU, fused or not, is the lowering's typed {@link CodegenException} naming the op,
 * never a crash and never a silently wrong kernel (an inverse rope computed as a forward one).
 */
class BackwardOpsRefusedTest {
    static final List<String> BODIES = List.of(
            "%y = gelu_grad(%x, %x) {approximate=\"none\"} : f32[4,8]",
            "%y = silu_grad(%x, %x) : f32[4,8]",
            "%y = softmax_grad(%x, %x) {scale=0.5} : f32[4,8]",
            "%y = rms_norm_grad(%x, %w, %x) {eps=1.0E-6} : f32[4,8]",
            "%y = layer_norm_grad(%x, %w, %x) {eps=1.0E-5} : f32[4,8]",
            "%y = reduce_sum(%x) {axes=[0]} : f32[8]",
            "%y = cross_entropy(%x, %t) : f32[]",
            "%y = scatter_add(%x, %t) {axis=0, size=6} : f32[6,8]",
            "%r = reshape(%x) {shape=[1,1,4,8]} : f32[1,1,4,8]\n  %y = rope(%r) {inverse=true} : f32[1,1,4,8]");

    @Test
    void everyBackwardOpIsACodegenExceptionNamingIt() {
        for (String body : BODIES) {
            String graph = "graph @backward {\n  %x = input {name=\"x\"} : f32[4,8]\n  %w = param {name=\"w\"} : f32[8]\n"
                    + "  %t = input {name=\"t\"} : i64[4]\n  " + body + "\n  return %y\n}\n";
            for (boolean fuse : new boolean[] {true, false}) {
                CompiledModel m = Compiler.compile(IrParser.parse(graph), CompileOptions.defaults().withTarget("cuda").withFuse(fuse));
                CodegenException e = assertThrows(CodegenException.class, () -> CudaLowering.lower(m, CudaTarget.H200), body);
                String op = body.substring(body.lastIndexOf("= ") + 2, body.lastIndexOf('('));
                assertTrue(e.getMessage().contains(op) || e.getMessage().contains("_grad"), e.getMessage());
            }
        }
    }
}
