package dev.lantern.onnx;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.lantern.ir.LanternException;
import onnx.Onnx.ModelProto;
import onnx.Onnx.TensorShapeProto;
import onnx.Onnx.ValueInfoProto;

import java.util.HashMap;
import java.util.Map;

/**
 * Fuzzes the ONNX importer: any bytes either import, or fail with a typed {@link LanternException}
 * ({@link OnnxImportException} for everything the importer itself checks); nothing else escapes, nothing hangs.
 * The last byte picks the value every symbolic dim is bound to (1-4); the rest is the model.
 * In CI this runs the regression seeds under src/test/resources; {@code JAZZER_FUZZ=1} fuzzes.
 */
class OnnxImporterFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void fuzzImporter(FuzzedDataProvider data) {
        int symbolic = data.consumeInt(1, 4);
        byte[] bytes = data.consumeRemainingAsBytes();
        ModelProto m;
        try {
            m = ModelLoader.parse(bytes);
        } catch (OnnxImportException expected) {
            return;
        }
        try {
            OnnxImporter.importModel(m, shapes(m, symbolic));
        } catch (LanternException expected) {
            // a typed refusal is the right answer to a bad model
        }
    }

    /** Each input's declared dims, symbolic ones bound to {@code symbolic}; inputs without a shape are left out. */
    static Map<String, long[]> shapes(ModelProto m, int symbolic) {
        Map<String, long[]> shapes = new HashMap<>();
        for (ValueInfoProto in : m.getGraph().getInputList()) {
            if (!in.getType().getTensorType().hasShape()) {
                continue;
            }
            TensorShapeProto s = in.getType().getTensorType().getShape();
            long[] dims = new long[s.getDimCount()];
            for (int i = 0; i < dims.length; i++) {
                dims[i] = s.getDim(i).hasDimValue() ? s.getDim(i).getDimValue() : symbolic;
            }
            shapes.put(in.getName(), dims);
        }
        return shapes;
    }
}
