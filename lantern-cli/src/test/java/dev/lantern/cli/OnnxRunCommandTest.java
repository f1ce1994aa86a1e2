package dev.lantern.cli;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.DType;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Shape;
import dev.lantern.onnx.OnnxModel;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code lantern run MODEL.onnx} and {@code lantern compile MODEL.onnx} on the CPU, in process through
 * {@link Main}, on a tiny language model written with the ONNX protobuf classes: the logits it writes
 * against ONNX Runtime's Java API and float64 (1e-5), the top tokens it prints, the shapes bound by each
 * option, the per-shape cache through the API, and every bad input as one line with its exit code.
 */
class OnnxRunCommandTest {
    private static final long SEED = 77;

    @TempDir
    Path dir;

    private Path lm() throws IOException {
        return Files.write(dir.resolve("lm.onnx"), OnnxFiles.languageModel(SEED).toByteArray());
    }

    /** ONNX Runtime's logits for {@code ids} and {@code mask}, both {@code [b][s]}. */
    private static double[] onnxRuntime(long[][] ids, long[][] mask) throws OrtException {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        long[] dims = {ids.length, ids[0].length};
        try (OrtSession s = env.createSession(OnnxFiles.languageModel(SEED).toByteArray(), new OrtSession.SessionOptions());
             OnnxTensor i = OnnxTensor.createTensor(env, LongBuffer.wrap(flat(ids)), dims);
             OnnxTensor m = OnnxTensor.createTensor(env, LongBuffer.wrap(flat(mask)), dims);
             OrtSession.Result r = s.run(Map.of("input_ids", i, "attention_mask", m))) {
            FloatBuffer b = ((OnnxTensor) r.get(0)).getFloatBuffer();
            double[] d = new double[b.remaining()];
            for (int k = 0; k < d.length; k++) {
                d[k] = b.get();
            }
            return d;
        }
    }

    private static long[] flat(long[][] a) {
        return Arrays.stream(a).flatMapToLong(Arrays::stream).toArray();
    }

    private static Tensor int64(long[][] a) {
        Tensor t = Tensor.allocate(DType.I64, Shape.of(a.length, a[0].length));
        long[] f = flat(a);
        for (int i = 0; i < f.length; i++) {
            t.set(i, f[i]);
        }
        return t;
    }

    /** The top 5 ids of the last position of row {@code row}, from {@code logits} of shape [b, s, vocab]. */
    private static String top5(double[] logits, int seq, int row) {
        int base = (row * seq + seq - 1) * OnnxFiles.VOCAB;
        return IntStream.range(0, OnnxFiles.VOCAB).boxed()
                .sorted(Comparator.comparingDouble((Integer v) -> -logits[base + v]).thenComparing(v -> v))
                .limit(5).map(String::valueOf).toList().toString().replace(" ", "");
    }

    @Test
    void tokensRunMatchesOnnxRuntimeAndFloat64AndPrintsTheTopTokens() throws Exception {
        Path out = dir.resolve("out");
        MainTest.Run r = MainTest.run("run", lm().toString(), "--device", "cpu", "--tokens", "3,1,4,1,5,9,2,6", "--runs", "1",
                "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        long[][] ids = {{3, 1, 4, 1, 5, 9, 2, 6}};
        long[][] ones = {{1, 1, 1, 1, 1, 1, 1, 1}};
        Tensor logits = Npy.read(out.resolve("logits.npy"));
        assertEquals("[1, 8, 29]", Arrays.toString(logits.shape().dims()));
        double[] ort = onnxRuntime(ids, ones);
        double[] ref = OnnxFiles.reference(SEED, ids, ones);
        assertTrue(RunCommandTest.relErr(logits.toDoubles(), ort) < 1e-5, "vs ONNX Runtime");
        assertTrue(RunCommandTest.relErr(logits.toDoubles(), ref) < 1e-5, "vs float64");
        assertTrue(r.out().contains("shapes    input_ids [1,8], attention_mask [1,8]"), r.out());
        assertTrue(r.out().contains("inputs    input_ids: tokens; attention_mask: ones"), r.out());
        assertTrue(r.out().contains("top5      logits[0,-1]  " + top5(ref, 8, 0)), r.out());
        assertTrue(r.out().contains("output    logits  [1,8,29]"), r.out());
        assertEquals("", r.err());
    }

    @Test
    void inputFilesBindTheShapesAndTheMaskApplies() throws Exception {
        long[][] ids = {{0, 28, 7, 7, 13, 2}, {5, 6, 1, 0, 0, 0}};
        long[][] mask = {{1, 1, 1, 1, 1, 1}, {1, 1, 1, 0, 0, 0}};
        Npy.write(dir.resolve("ids.npy"), int64(ids));
        Npy.write(dir.resolve("mask.npy"), int64(mask));
        Path out = dir.resolve("out");
        MainTest.Run r = MainTest.run("run", lm().toString(), "--device", "cpu", "--runs", "1", "--out", out.toString(),
                "--input", "input_ids=" + dir.resolve("ids.npy"), "--input=attention_mask=" + dir.resolve("mask.npy"));
        assertEquals(0, r.code(), r.err());
        double[] got = Npy.read(out.resolve("logits.npy")).toDoubles();
        assertTrue(RunCommandTest.relErr(got, onnxRuntime(ids, mask)) < 1e-5, "vs ONNX Runtime");
        assertTrue(RunCommandTest.relErr(got, OnnxFiles.reference(SEED, ids, mask)) < 1e-5, "vs float64");
        assertTrue(r.out().contains("shapes    input_ids [2,6], attention_mask [2,6]"), r.out());
        // the masked row's last position is all zeros: its top five are the lowest ids
        assertTrue(r.out().contains("top5      logits[1,-1]  [0,1,2,3,4]"), r.out());
    }

    @Test
    void randomIdsFromBatchAndSeqAreInTheVocabularyAndSeeded() throws IOException {
        Path model = Files.copy(lm(), dir.resolve("model.bin")); // not named .onnx: told by its first byte
        MainTest.Run a = MainTest.run("run", model.toString(), "--device", "cpu", "--batch", "3", "--seq", "5", "--runs", "1", "--json");
        assertEquals(0, a.code(), a.err());
        String json = a.out();
        assertTrue(json.contains("\"shapes\": {\"input_ids\": [3, 5], \"attention_mask\": [3, 5]}"), json);
        assertTrue(json.contains("\"input_ids\": \"random ids in [0,29)\""), json);
        assertTrue(json.contains("\"attention_mask\": \"ones\""), json);
        assertTrue(json.contains("\"vocab\": 29"), json);
        assertTrue(json.contains("\"top_tokens\": [["), json);
        MainTest.Run b = MainTest.run("run", model.toString(), "--device", "cpu", "--batch", "3", "--seq", "5", "--runs", "1");
        MainTest.Run c = MainTest.run("run", model.toString(), "--device", "cpu", "--batch", "3", "--seq", "5", "--runs", "1", "--seed", "1");
        String sha = sha(b.out());
        assertEquals(sha, sha(MainTest.run("run", model.toString(), "--device", "cpu", "--batch", "3", "--seq", "5", "--runs", "1").out()));
        assertFalse(sha.equals(sha(c.out())), "another seed, other ids");
        // --vocab overrides the embedding's 29: ids in [0, 4) only
        MainTest.Run v = MainTest.run("run", model.toString(), "--device", "cpu", "--batch", "1", "--seq", "2", "--vocab", "4", "--runs", "1");
        assertTrue(v.out().contains("input_ids: random ids in [0,4)"), v.out());
    }

    private static String sha(String out) {
        var m = java.util.regex.Pattern.compile("sha256 ([0-9a-f]{12})").matcher(out);
        assertTrue(m.find(), out);
        return m.group(1);
    }

    @Test
    void compileBindsTheShapesAndPrintsEachStage() throws IOException {
        Path lm = lm();
        MainTest.Run ir = MainTest.run("compile", lm.toString(), "--emit", "ir", "--batch", "2", "--seq", "3");
        assertEquals(0, ir.code(), ir.err());
        assertTrue(ir.out().lines().findFirst().orElseThrow().endsWith("shapes input_ids [2,3], attention_mask [2,3]"), ir.out());
        assertTrue(IrParser.parse(ir.out()).outputs().size() == 1, "the IR parses back");
        assertTrue(ir.out().contains("f32[2,3,29]"), ir.out());
        // steps and cuda lower for the GPU, which has no gather kernel yet (a typed error, exit 1)
        for (String stage : List.of("kernels", "plan")) {
            MainTest.Run r = MainTest.run("compile", lm.toString(), "--emit", stage, "--shape", "input_ids=1,4", "--shape", "attention_mask=1,4");
            assertEquals(0, r.code(), stage + ": " + r.err());
            assertTrue(r.out().lines().findFirst().orElseThrow().contains("shapes input_ids [1,4], attention_mask [1,4]"), r.out());
        }
    }

    @Test
    void theSecondCompileOfAShapeCompilesNothing() throws IOException {
        OnnxModel model = OnnxModel.open(lm(), CompileOptions.defaults());
        Map<String, long[]> shapes = OnnxShapes.bind("run", model, Map.of(), 2L, 7L);
        OnnxModel.Compiled first = OnnxRunCommand.compile(model, shapes, model.options(), "lm.onnx");
        assertSame(first.program(), OnnxRunCommand.compile(model, OnnxShapes.bind("run", model, Map.of(), 2L, 7L), model.options(), "lm.onnx").program());
        assertEquals(1, model.compilations());
        assertArrayEquals(new long[] {2, 7}, first.shapes().get("attention_mask"));
        OnnxRunCommand.compile(model, OnnxShapes.bind("run", model, Map.of(), 2L, 8L), model.options(), "lm.onnx");
        assertEquals(2, model.compilations());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            missing file          | run /no/such.onnx --batch 1 --seq 2                   | 1 | lantern run: no such file: /no/such.onnx
            malformed ONNX        | run BAD.onnx --batch 1 --seq 2                        | 1 | BAD.onnx: malformed ONNX model (3 bytes)
            unknown op            | run FROB.onnx --device cpu                            | 1 | node 'layer3/frob' (FrobnicateV2, opset 17): unknown or unsupported op type 'FrobnicateV2'
            old opset             | run OLD.onnx --batch 1                                | 1 | the model uses opset 9; Lantern imports opsets 13 to 21
            unbound symbolic dim  | run LM --device cpu                                   | 2 | lantern run: input input_ids int64[batch,sequence]: dim 0 ('batch') is symbolic and has no value; bind it with --batch B --seq S, --tokens,
            seq without batch     | run LM --seq 4                                        | 2 | dim 0 ('batch') is symbolic and has no value
            compile unbound       | compile LM --emit ir                                  | 2 | lantern compile: input input_ids int64[batch,sequence]: dim 0 ('batch') is symbolic and has no value; bind it with --batch B --seq S or --shape
            token outside vocab   | run LM --device cpu --tokens 1,29 --runs 1            | 1 | id 29 at position 1
            tokens not numbers    | run LM --tokens 1,x                                   | 2 | lantern run: --tokens takes token ids separated by commas, found '1,x'
            negative token        | run LM --tokens 1,-2                                  | 2 | ids must be in [0,
            tokens and batch      | run LM --tokens 1,2 --batch 2                         | 2 | --batch and --seq are for random ids
            tokens without ids    | run TANH.onnx --tokens 1,2                            | 2 | has no token-id input
            batch zero            | run LM --batch 0 --seq 2                              | 2 | lantern run: --batch must be in [1,
            malformed shape       | run LM --shape input_ids=2,x                          | 2 | dims must be positive integers
            shape of no input     | run LM --batch 1 --seq 2 --shape nope=1               | 2 | has no input named 'nope'
            input of no input     | run LM --input nope=IDS                               | 2 | has no input named 'nope'
            input float for ids   | run LM --input input_ids=FLOATS --batch 1 --seq 2     | 1 | floats and integers do not convert
            conflicting batch     | run LM --input input_ids=IDS --batch 3                | 2 | --batch 3 binds 'batch', which another input's shape binds to 1
            weights with ONNX     | run LM --weights w.safetensors                        | 2 | --weights applies to IR files
            tokens on an IR file  | run IR --tokens 1,2                                   | 2 | --tokens applies to ONNX models
            shape on an IR file   | compile IR --emit ir --shape x=1                      | 2 | --batch, --seq and --shape apply to ONNX models
            random ids, no vocab  | run NOEMB.onnx --batch 1 --seq 2                      | 2 | cannot tell the vocabulary of input 'ids'
            """)
    void badInputIsOneLine(String what, String argLine, int code, String message) throws IOException {
        Path lm = lm();
        Files.write(dir.resolve("BAD.onnx"), new byte[] {0x08, (byte) 0x80, (byte) 0x80});
        Files.write(dir.resolve("FROB.onnx"), OnnxFiles.unknownOp().toByteArray());
        Files.write(dir.resolve("OLD.onnx"), OnnxFiles.oldOpset().toByteArray());
        Files.write(dir.resolve("TANH.onnx"), OnnxFiles.floatModel().toByteArray());
        Files.write(dir.resolve("NOEMB.onnx"), noEmbedding().toByteArray());
        Npy.write(dir.resolve("ids.npy"), int64(new long[][] {{1, 2, 3}}));
        Npy.write(dir.resolve("floats.npy"), Tensor.allocate(DType.F32, Shape.of(1, 2)));
        Path ir = Examples.file(dir, "mlp-softmax.ir");
        List<String> args = new ArrayList<>();
        for (String s : argLine.split(" ")) {
            args.add(s.equals("LM") ? lm.toString() : s.equals("IR") ? ir.toString()
                    : s.replace("IDS", dir.resolve("ids.npy").toString()).replace("FLOATS", dir.resolve("floats.npy").toString())
                    .replaceAll("^([A-Z]+\\.onnx)$", dir + "/$1"));
        }
        MainTest.Run r = MainTest.run(args.toArray(String[]::new));
        assertEquals(code, r.code(), () -> what + ": " + r.err());
        assertTrue(r.err().contains(message), () -> what + ": " + r.err());
        assertEquals(1, r.err().strip().lines().count(), () -> what + ": " + r.err());
        assertFalse(r.err().contains("\tat "), "no stack trace");
    }

    /** ids int64 [batch, seq] → Gather from Neg(table), a computed value: an integer input that no embedding table reads. */
    private static onnx.Onnx.ModelProto noEmbedding() {
        var ids = onnx.Onnx.ValueInfoProto.newBuilder().setName("ids").setType(onnx.Onnx.TypeProto.newBuilder().setTensorType(
                onnx.Onnx.TypeProto.Tensor.newBuilder().setElemType(onnx.Onnx.TensorProto.DataType.INT64_VALUE)
                        .setShape(onnx.Onnx.TensorShapeProto.newBuilder()
                                .addDim(onnx.Onnx.TensorShapeProto.Dimension.newBuilder().setDimParam("batch"))
                                .addDim(onnx.Onnx.TensorShapeProto.Dimension.newBuilder().setDimParam("seq")))));
        onnx.Onnx.ModelProto lm = OnnxFiles.languageModel(1);
        var g = onnx.Onnx.GraphProto.newBuilder().setName("noemb").addInput(ids)
                .addOutput(onnx.Onnx.ValueInfoProto.newBuilder().setName("y"))
                .addInitializer(lm.getGraph().getInitializerList().stream().filter(t -> t.getName().equals("wte")).findFirst().orElseThrow())
                .addNode(onnx.Onnx.NodeProto.newBuilder().setOpType("Neg").setName("neg").addInput("wte").addOutput("table"))
                .addNode(onnx.Onnx.NodeProto.newBuilder().setOpType("Gather").setName("gather").addInput("table").addInput("ids").addOutput("y"));
        return lm.toBuilder().setGraph(g).build();
    }
}
