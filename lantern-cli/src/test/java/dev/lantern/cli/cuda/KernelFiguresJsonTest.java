package dev.lantern.cli.cuda;

import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.KernelFigures;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.Step;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** bench macro's {@code kernel_figures} value for a lowered block (no GPU: stand-in occupancy and times) parses as JSON with every figure. */
class KernelFiguresJsonTest {
    @Test
    void kernelFiguresAreJsonWithShapesForLaunchesOnly() {
        CompiledModel m = Compiler.compile(TransformerBlock.build(BlockConfig.named("decoder-small"), DType.BF16).graph(),
                CompileOptions.defaults().withTarget("cuda"));
        List<Step> steps = CudaLowering.lower(m, CudaTarget.H200).steps();
        List<CudaSession.StepTime> times = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            times.add(new CudaSession.StepTime("op" + i, 0.002 * (i + 1)));
        }
        List<KernelFigures.Figure> figs = KernelFigures.of(steps, m.kernels(), times, l -> 4, 2048, 132);
        String json = KernelFiguresJson.of(figs).toString();
        JsonArray arr = assertInstanceOf(JsonArray.class, JsonParser.parse(json.getBytes(StandardCharsets.UTF_8), 8));
        assertEquals(figs.size(), arr.elements().size());
        int launches = 0;
        for (int i = 0; i < figs.size(); i++) {
            Map<String, JsonValue> f = assertInstanceOf(JsonObject.class, arr.elements().get(i)).members();
            assertEquals((long) figs.get(i).bytes(), assertInstanceOf(JsonNumber.class, f.get("bytes")).longValueOrNull());
            assertEquals(figs.get(i).dramGbps(), Double.parseDouble(assertInstanceOf(JsonNumber.class, f.get("dram_gbps")).literal()), 0.051);
            for (JsonValue lv : assertInstanceOf(JsonArray.class, f.get("launches")).elements()) {
                Map<String, JsonValue> l = assertInstanceOf(JsonObject.class, lv).members();
                int step = assertInstanceOf(JsonNumber.class, l.get("step")).longValueOrNull().intValue();
                if (steps.get(step) instanceof Step.Launch) {
                    launches++;
                    assertEquals(3, assertInstanceOf(JsonArray.class, l.get("grid")).elements().size());
                    assertTrue(l.containsKey("occupancy_pct") && l.containsKey("waves"));
                } else {
                    assertFalse(l.containsKey("grid"), "a GEMM has no launch shape of ours");
                }
            }
        }
        assertTrue(launches > 0);
        assertEquals("null", KernelFiguresJson.number(Double.NaN, 2).toString());
    }
}
