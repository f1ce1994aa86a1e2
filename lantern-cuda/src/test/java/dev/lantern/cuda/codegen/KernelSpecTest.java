package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static dev.lantern.ir.DType.BF16;
import static dev.lantern.ir.DType.F32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Path choice, launch configurations, NVRTC-cleanliness and bad input of every kernel family. */
class KernelSpecTest {
    private static final CudaTarget H200 = CudaTarget.H200;

    static Stream<KernelSpec> specs() {
        return BenchmarkKernels.all().stream();
    }

    @ParameterizedTest
    @MethodSource("specs")
    void everyKernelIsOneUnmangledEntryWithOnlyTheAllowedHeaders(KernelSpec spec) {
        CudaKernelSource src = spec.render(H200);
        assertEquals(spec.name(), src.entry());
        String text = src.source();
        Matcher m = Pattern.compile("extern \"C\" __global__ void (__launch_bounds__\\(\\d+(?:, \\d+)?\\) )?(\\w+)\\(").matcher(text);
        assertTrue(m.find(), "no extern \"C\" __global__ entry");
        assertEquals(spec.name(), m.group(2));
        assertFalse(m.find(), "more than one entry");
        List<String> includes = text.lines().filter(l -> l.startsWith("#include")).toList();
        assertEquals(List.of("#include <cuda_bf16.h>", "#include <cuda_fp16.h>"), includes);
        assertEquals(text.chars().filter(c -> c == '{').count(), text.chars().filter(c -> c == '}').count());
        // the params listed are the signature's, in order
        String sig = text.substring(text.indexOf(spec.name() + "(") + spec.name().length() + 1);
        sig = sig.substring(0, sig.indexOf(')'));
        assertEquals(String.join(", ", src.params().stream().map(KernelParam::toString).toList()), sig);
        assertEquals(64, src.sourceHash().length());
        assertEquals(src.sourceHash(), spec.render(H200).sourceHash(), "rendering is deterministic");
        LaunchConfig l = src.launch();
        assertTrue(l.threads() % 32 == 0, "block of whole warps: " + l);
        assertTrue(l.dynamicSharedBytes() <= H200.sharedBytesPerBlock());
    }

    @Test
    void normTakesTheRegisterPathWhenTheRowSplitsIntoVectors() {
        CudaKernelSource fast = NormSpec.rms("n", 16384, 4096, 1e-6, BF16).render(H200);
        assertEquals("registers", fast.variant());
        assertEquals(LaunchConfig.linear(16384, 128, 0), fast.launch());
        assertEquals(LaunchConfig.linear(7, 128, 0), fast.launch(ProblemSize.of(7)));
        assertTrue(fast.requiresAligned16());
        assertEquals("general", NormSpec.rms("n", 10, 4100, 1e-6, BF16).render(H200).variant());
        assertFalse(NormSpec.rms("n", 10, 4100, 1e-6, BF16).render(H200).requiresAligned16());
        assertEquals("general", NormSpec.layer("n", 10, 1000, 1e-5, BF16, true).render(H200).variant());
        assertEquals("registers", NormSpec.rms("n", 10, 256, 1e-6, BF16).render(H200).variant());
    }

    @Test
    void softmaxPathAndMask() {
        CudaKernelSource s = new SoftmaxSpec("s", 4096, 1024, 0.125, true, 1024, BF16, BF16).render(H200);
        assertEquals("registers", s.variant());
        assertTrue(s.source().contains("row % 1024LL"));
        assertEquals("general", SoftmaxSpec.plain("s", 8, 1000, BF16).render(H200).variant());
    }

    @Test
    void elementwiseChoosesVectorOrScalarFromStrides() {
        List<Long> shape = List.of(64L, 4096L);
        var full = ElementwiseSpec.Operand.contiguous(BF16, shape);
        var bias = new ElementwiseSpec.Operand(BF16, List.of(0L, 1L));
        var col = new ElementwiseSpec.Operand(F32, List.of(1L, 0L));
        var add = new ElementwiseSpec.Step(ElementwiseOp.ADD, List.of(0, 1));
        assertEquals("vector", new ElementwiseSpec("e", shape, List.of(full, bias), List.of(add), BF16).render(H200).variant());
        assertEquals("vector", new ElementwiseSpec("e", shape, List.of(full, col), List.of(add), BF16).render(H200).variant());
        List<Long> odd = List.of(64L, 4095L);
        var oddBias = new ElementwiseSpec.Operand(BF16, List.of(0L, 1L));
        assertEquals("scalar", new ElementwiseSpec("e", odd,
                List.of(ElementwiseSpec.Operand.contiguous(BF16, odd), oddBias), List.of(add), BF16).render(H200).variant());
        // contiguous operands of an odd size: vector body plus scalar tail
        CudaKernelSource tail = new CastSpec("c", 1001, BF16, F32).render(H200);
        assertEquals("vector", tail.variant());
        assertTrue(tail.source().contains("scalar tail"));
        // a transposed operand cannot use vectors
        var transposed = new ElementwiseSpec.Operand(BF16, List.of(1L, 64L));
        assertEquals("scalar", new ElementwiseSpec("e", shape, List.of(full, transposed), List.of(add), BF16)
                .render(H200).variant());
    }

    @Test
    void elementwiseRejectsBadChains() {
        List<Long> shape = List.of(8L);
        var in = ElementwiseSpec.Operand.contiguous(BF16, shape);
        assertThrows(CodegenException.class, () -> new ElementwiseSpec("e", shape, List.of(in),
                List.of(new ElementwiseSpec.Step(ElementwiseOp.ADD, List.of(0, 1))), BF16));
        assertThrows(CodegenException.class, () -> new ElementwiseSpec("e", shape, List.of(in),
                List.of(new ElementwiseSpec.Step(ElementwiseOp.NEG, List.of(0, 0))), BF16));
        assertThrows(CodegenException.class, () -> new ElementwiseSpec("bad name", shape, List.of(in), List.of(), BF16));
        assertThrows(CodegenException.class, () -> new ElementwiseSpec("e", shape,
                List.of(new ElementwiseSpec.Operand(BF16, List.of(1L, 1L))), List.of(), BF16));
        assertThrows(CodegenException.class, () -> new ElementwiseSpec("e", shape, List.of(in), List.of(), DType.I64)
                .render(H200));
    }

    @Test
    void ropePaths() {
        assertEquals("vector", RopeSpec.rotateHalf("r", 512, 1024, 128, 1e4, BF16).render(H200).variant());
        assertEquals("general", RopeSpec.rotateHalf("r", 4, 7, 36, 1e4, BF16).render(H200).variant());
        assertThrows(CodegenException.class, () -> RopeSpec.rotateHalf("r", 4, 7, 35, 1e4, BF16));
        assertThrows(CodegenException.class, () -> RopeSpec.rotateHalf("r", 4, 7, 64, -1, BF16));
    }

    @Test
    void permuteCopiesOrTiles() {
        assertEquals("vector", new PermuteSpec("p", List.of(2L, 16L, 4L, 64L), List.of(0, 2, 1, 3), BF16)
                .render(H200).variant());
        assertEquals("tiled", new PermuteSpec("p", List.of(2L, 16L, 64L), List.of(0, 2, 1), BF16).render(H200).variant());
        // a size-1 axis moving does not make a transpose
        assertEquals("vector", new PermuteSpec("p", List.of(16L, 1L, 64L), List.of(1, 0, 2), BF16).render(H200).variant());
        assertThrows(CodegenException.class, () -> new PermuteSpec("p", List.of(2L, 3L), List.of(0, 0), BF16));
    }

    @Test
    void ropeReadsAStridedInputInPlace() {
        // q inside a fused (b, s, 3, h, d) QKV output, viewed as (b, h, s, d): 2 x 32 heads x 16 tokens x 128
        RopeSpec.InputLayout in = new RopeSpec.InputLayout(32, 16L * 3 * 4096, 128, 3 * 4096);
        RopeSpec r = new RopeSpec("r", 2L * 32 * 16, 16, 128, 10000.0, 0, false, BF16, BF16, in);
        CudaKernelSource src = r.render(H200);
        assertEquals("vector", src.variant());
        assertTrue(src.source().contains("const long long xbase = (row / (32LL * SEQ)) * 196608LL + ((row / SEQ) % 32LL) * 128LL"
                + " + (row % SEQ) * 12288LL;"), src.source());
        assertTrue(src.source().contains("x + xbase + HALF + c * V"));
        // a stride that is not a whole vector takes the general path
        RopeSpec odd = new RopeSpec("r", 2L * 32 * 16, 16, 128, 10000.0, 0, false, BF16, BF16,
                new RopeSpec.InputLayout(32, 16L * 3 * 4100, 129, 3 * 4100));
        assertEquals("general", odd.render(H200).variant());
        assertTrue(odd.render(H200).source().contains("lt_f32(x[x0])"));
        // contiguous: the text of the plain kernel
        assertFalse(RopeSpec.rotateHalf("r", 64, 16, 128, 10000.0, BF16).render(H200).source().contains("xbase"));
    }

    @Test
    void ropeInsideAttentionOnlyOnTilesWhoseProducerCanRotate() {
        AttentionSpec a = AttentionSpec.of("a", 16, 32, 1024, 1024, 128, true, BF16).withRope(10000);
        assertTrue(a.fusedRope());
        CudaTarget rotating = H200.withWgmmaAttention(new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true));
        assertTrue(a.ropeFusable(rotating));
        CudaKernelSource src = a.render(rotating);
        assertEquals("wgmma", src.variant());
        assertTrue(src.source().contains("RoPE on q and k"));
        assertTrue(src.source().contains("#define LT_KRAW(s)"), "K lands on its own barrier before it is rotated");
        assertTrue(src.source().contains("lt_mbar_init(LT_KFULL(s), 128)"), "the whole producer warpgroup releases K");
        assertTrue(src.source().contains("setmaxnreg.dec.sync.aligned.u32 64;"));
        assertTrue(src.source().contains("setmaxnreg.inc.sync.aligned.u32 216;"));
        assertTrue(src.source().contains("__device__ const float a_theta[64]"));
        assertFalse(a.withRope(0).render(rotating).source().contains("LT_KRAW"), "without RoPE: the plain kernel");
        // tiles whose producer is a single warp, the mma.sync and general kernels: refused, never wrong
        assertFalse(a.ropeFusable(H200));
        assertThrows(CodegenException.class, () -> a.render(H200));
        assertThrows(CodegenException.class, () -> a.render(H200.withAttention(H200.attention64(), H200.attention128())));
        assertThrows(CodegenException.class, () -> AttentionSpec.of("a", 1, 1, 8, 8, 80, false, BF16).withRope(10000).render(H200));
        assertThrows(CodegenException.class, () -> AttentionSpec.of("a", 1, 1, 8, 8, 128, false, BF16).withRope(0.5));
        assertThrows(CodegenException.class, () -> AttentionSpec.of("a", 1, 1, 8, 8, 127, false, BF16).withRope(10000));
    }

    @Test
    void queryRopeInsideAttentionOnEveryWarpSpecialisedTmaTile() {
        AttentionSpec plain = AttentionSpec.of("a", 16, 32, 1024, 1024, 128, true, BF16);
        AttentionSpec a = plain.withQueryRope(10000);
        assertTrue(a.fusedRope());
        assertFalse(a.ropeKeys());
        assertFalse(plain.withQueryRope(0).ropeKeys(), "no RoPE, no keys to rotate");
        assertEquals(plain, plain.withQueryRope(0));
        // the H200's default tile (one consumer warpgroup, TMA) rotates q but not k
        assertTrue(a.ropeFusable(H200));
        assertFalse(plain.withRope(10000).ropeFusable(H200));
        String src = a.render(H200).source();
        assertTrue(src.contains("RoPE on q)"), "the banner says what the kernel rotates");
        assertTrue(src.contains("lt_rope_chunk(sQ + r * 128"), "the consumers rotate their Q tile");
        assertFalse(src.contains("LT_KRAW"), "K arrives rotated: no raw-K barrier, no producer rotation");
        assertTrue(src.contains("lt_mbar_init(LT_KFULL(s), FULL)"));
        assertTrue(src.contains("__device__ const float a_theta[64]"));
        // two consumers: the producer keeps its 24 registers (it rotates nothing)
        CudaTarget two = H200.withWgmmaAttention(new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true));
        assertTrue(a.render(two).source().contains("setmaxnreg.dec.sync.aligned.u32 24;"));
        // no TMA (cp.async tiles), no producer, the mma.sync kernel: refused, never wrong
        assertThrows(CodegenException.class, () -> a.render(H200.withWgmmaAttention(new CudaTarget.WgmmaTile(64, 1, 1, false))));
        assertThrows(CodegenException.class, () -> a.render(H200.withWgmmaAttention(new CudaTarget.WgmmaTile(64, 2, 2, false, 1))));
        assertThrows(CodegenException.class, () -> a.render(H200.withAttention(H200.attention64(), H200.attention128())));
    }

    @Test
    void persistentAttentionWalksQueryTilesOnAGridCoprimeToTheHeadsBlocks() {
        CudaTarget.WgmmaTile pp = new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true).asPersistent();
        assertEquals("gk128s2b1c2tpP", pp.tag());
        assertThrows(IllegalArgumentException.class, () -> new CudaTarget.WgmmaTile(64, 1, 1, false).asPersistent(),
                "a persistent CTA needs the TMA producer");
        CudaTarget target = H200.withWgmmaAttention(pp);
        AttentionSpec causal = AttentionSpec.of("a", 16, 32, 1024, 1024, 128, true, BF16);
        CudaKernelSource src = causal.render(target);
        // 4096 query tiles of 128 rows, 8 per head: 131 CTAs (132 shares a factor with 8, so CTA c
        // would always get the same two blocks of a head), each walking tiles c, c + 131, ...
        assertEquals(131, src.launch().gridX());
        assertTrue(src.source().contains("const int ntiles = 512 * qblocks;"));
        assertTrue(src.source().contains("for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x, ++tc)"));
        assertTrue(src.source().contains("constexpr int QBUF = 1;"));
        assertTrue(src.source().contains("lt_mbar_wait(LT_QF(tc % QBUF), (tc / QBUF) & 1);"), "one Q per tile, phase by phase");
        assertTrue(src.source().contains("if (tc >= QBUF) lt_mbar_wait(LT_QE(qb), ((tc / QBUF) - 1) & 1);"),
                "the producer loads the next Q once the consumers are done with the buffer's last");
        assertTrue(src.source().contains("LT_KFULL((it0 + kt) % STAGES), ((it0 + kt) / STAGES) & 1"),
                "the K and V ring runs on across query tiles");
        assertTrue(src.source().contains("lt_mbar_arrive(LT_VEMPTY((it0 + nk - 1) % STAGES));"),
                "the last V stage of a tile is released too (the next tile's copies wait for it)");
        assertEquals(132, AttentionSpec.of("a", 16, 32, 1024, 1024, 128, false, BF16).render(target).launch().gridX(),
                "without the mask every tile is the same work: one CTA per SM");
        assertEquals(8, AttentionSpec.of("a", 1, 1, 1024, 1024, 128, true, BF16).render(target).launch().gridX(),
                "fewer tiles than SMs: one CTA each");
        // two Q buffers: the next tile's Q is copied while the consumers read this one; 32 KiB more
        CudaTarget.WgmmaTile two = new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true).asPersistent(2);
        assertEquals("gk128s2b1c2tpP2", two.tag());
        CudaKernelSource src2 = causal.render(H200.withWgmmaAttention(two));
        assertTrue(src2.source().contains("constexpr int QBUF = 2;"));
        assertEquals(src.launch().dynamicSharedBytes() + 2 * 64 * 256, src2.launch().dynamicSharedBytes());
        assertThrows(CodegenException.class, () -> causal.render(H200.withWgmmaAttention(
                new CudaTarget.WgmmaTile(128, 3, 1, false, 2, true, true).asPersistent(2))), "three stages and two Qs do not fit");
        assertThrows(IllegalArgumentException.class, () -> pp.asPersistent(3));
        // q rotated inside works on persistent tiles; k rotated inside (the producer's work) does not
        assertTrue(causal.withQueryRope(10000).render(target).source().contains("lt_rope_chunk(sQ + r * 128"));
        assertFalse(causal.withRope(10000).ropeFusable(target));
        // the plain tile's text is unchanged by the ring: tile j's stage is j
        String plain = causal.render(H200.withWgmmaAttention(new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true))).source();
        assertTrue(plain.contains("lt_mbar_wait(LT_KFULL(kt % STAGES), (kt / STAGES) & 1);"));
        assertFalse(plain.contains("it0"));
    }

    @Test
    void persistentGridIsCoprimeForCausalWork() {
        assertEquals(131, AttentionWgmmaRenderer.persistentGrid(4096, 8, 132, true));
        assertEquals(132, AttentionWgmmaRenderer.persistentGrid(4096, 8, 132, false));
        assertEquals(131, AttentionWgmmaRenderer.persistentGrid(4096, 2, 132, true));
        assertEquals(132, AttentionWgmmaRenderer.persistentGrid(4096, 7, 132, true));
        assertEquals(5, AttentionWgmmaRenderer.persistentGrid(5, 8, 132, true), "every tile its own CTA");
        assertEquals(1, AttentionWgmmaRenderer.persistentGrid(1, 1, 132, true));
    }

    @Test
    void attentionFastPathOnlyForItsHeadDims() {
        AttentionSpec a = AttentionSpec.of("a", 16, 32, 1024, 1024, 128, true, BF16);
        CudaKernelSource hopper = a.render(H200);
        assertEquals("wgmma", hopper.variant());
        assertTrue(hopper.archSpecific(), "wgmma needs the sm_90a build");
        assertEquals("sm_90a", hopper.arch(H200));
        assertTrue(hopper.source().contains("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"));
        assertTrue(hopper.source().contains("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"));
        assertTrue(hopper.source().contains("fence.proxy.async.shared::cta"));
        assertEquals(16L * 32 * (1024 / 64), hopper.launch().gridX());
        // the default Hopper tile copies with TMA: three tensor maps after the 19 ordinary arguments
        assertTrue(hopper.source().contains("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"));
        List<KernelParam> ps = hopper.params();
        assertEquals(22, ps.size());
        assertEquals(List.of("tm_q_64", "tm_k_64", "tm_v_64"), ps.subList(19, 22).stream().map(KernelParam::name).toList());
        assertTrue(ps.subList(19, 22).stream().allMatch(p -> p.cType().equals("const __grid_constant__ LtTensorMap")));
        assertEquals(160, hopper.launch().blockX(), "one consumer warpgroup and one producer warp");
        // without TMA (every thread loads with cp.async): no tensor maps, one warpgroup
        CudaKernelSource plain = a.render(H200.withWgmmaAttention(new CudaTarget.WgmmaTile(64, 1, 1, false)));
        assertEquals(19, plain.params().size());
        assertEquals(128, plain.launch().blockX());
        assertEquals("wgmma", AttentionSpec.of("a", 1, 1, 7, 9, 128, false, DType.F16).render(H200).variant());
        // without wgmma (another GPU, or the mma.sync tile chosen): the mma.sync kernel
        CudaTarget ampere = H200.withAttention(H200.attention64(), H200.attention128());
        assertEquals(null, ampere.wgmmaAttention());
        CudaKernelSource src = a.render(ampere);
        assertEquals("mma", src.variant());
        assertFalse(src.archSpecific());
        assertTrue(src.source().contains("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
        assertTrue(src.source().contains("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
        assertTrue(src.source().contains("cp.async.cg.shared.global"));
        int br = H200.attention128().queryRows();
        assertEquals(16L * 32 * (1024 / br), src.launch().gridX());
        assertEquals("mma", AttentionSpec.of("a", 1, 1, 7, 9, 64, false, DType.F16).render(H200).variant());
        assertEquals("general", AttentionSpec.of("a", 1, 1, 7, 9, 80, false, BF16).render(H200).variant());
        assertEquals("general", AttentionSpec.of("a", 1, 1, 7, 9, 128, false, F32).render(H200).variant());
        assertEquals("mma", AttentionSpec.of("a", 1, 1, 7, 9, 64, false, BF16).render(H200).variant(),
                "head_dim 64 keeps the mma.sync kernel on Hopper");
        assertEquals(4.0 * 16 * 32 * 1024 * 1024 * 128 * 0.5, a.flops());
        assertThrows(CodegenException.class, () -> AttentionSpec.of("a", 1, 1, 0, 9, 64, false, BF16));
    }

    @Test
    void floatLiteralsRoundTripAndStayParenthesised() {
        assertEquals("0.125f", ElementwiseRenderer.floatLiteral(0.125));
        assertEquals("(-0.5f)", ElementwiseRenderer.floatLiteral(-0.5));
        assertEquals("1.0e-6f", ElementwiseRenderer.floatLiteral(1e-6));
        assertEquals("LT_INF", ElementwiseRenderer.floatLiteral(Double.POSITIVE_INFINITY));
    }
}
