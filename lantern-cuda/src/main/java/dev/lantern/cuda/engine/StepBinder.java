package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.lower.Buf;
import dev.lantern.cuda.lower.LaunchContract;
import dev.lantern.cuda.lower.Step;
import dev.lantern.runtime.alloc.Allocation;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Step -> a {@link Runnable} that launches it on the stream with every address resolved once:
 * kernel arguments (and TMA tensor maps) packed, the GEMM's cuBLASLt candidate chosen. Every
 * address is checked against its allocation's room and alignment as it is bound (the launch
 * contract's second half: {@link LaunchContract#checkBound} names the step and operand).
 */
final class StepBinder {
    private final CudaDevice device;
    private final CudaStream stream;
    private final BufferMap buffers;
    private final Map<Step.GemmUse, Integer> gemmChoice = new HashMap<>();
    private CudaProgram program;

    StepBinder(CudaDevice device, CudaStream stream, BufferMap buffers, CudaProgram program) {
        this.device = device;
        this.stream = stream;
        this.buffers = buffers;
        this.program = program;
    }

    void use(CudaProgram p) {
        this.program = p;
    }

    /** The cuBLASLt candidate each GEMM use runs (the autotuner's choices; 0 when unset). */
    Map<Step.GemmUse, Integer> gemmChoice() {
        return gemmChoice;
    }

    Runnable bind(Step s) {
        return switch (s) {
            case Step.Launch l -> bindLaunch(l, l.source(), l.args());
            case Step.Gemm gs -> bindGemm(gs, gemmChoice.getOrDefault(gs.use(), 0));
        };
    }

    Runnable bindGemm(Step.Gemm gs, int choice) {
        GemmSpec sp = gs.spec();
        CublasLtGemm gemm = program.gemm(sp);
        long a = bound(gs, "A", gs.a(), gs.aOffset(), LaunchContract.gemmBytes(sp, 'A'), LaunchContract.GEMM_ALIGNMENT);
        long b = bound(gs, "B", gs.b(), LaunchContract.gemmBytes(sp, 'B'), LaunchContract.GEMM_ALIGNMENT);
        long c = gs.c() == null ? 0 : bound(gs, "C", gs.c(), LaunchContract.gemmBytes(sp, 'D'), LaunchContract.GEMM_ALIGNMENT);
        long d = bound(gs, "D", gs.d(), LaunchContract.gemmBytes(sp, 'D'), LaunchContract.GEMM_ALIGNMENT);
        long bias = gs.bias() != null ? bound(gs, "bias", gs.bias(), (long) sp.n() * sp.biasType().bytes, LaunchContract.GEMM_ALIGNMENT)
                : gs.aux() != null ? bound(gs, "aux", gs.aux(), LaunchContract.gemmBytes(sp, 'D'), LaunchContract.GEMM_ALIGNMENT) : 0;
        float beta = gs.beta();
        Allocation workspace = buffers.workspace();
        long ws = workspace.address();
        long wsBytes = GemmPlans.WORKSPACE_BYTES;
        if (!gemm.candidates().isEmpty()) {
            long need = gemm.candidates().get(choice).workspaceBytes();
            contract(gs, "workspace", ws, Math.min(workspace.size(), wsBytes), need, LaunchContract.GEMM_ALIGNMENT);
        }
        return () -> gemm.run(stream, a, b, c, d, bias, 1f, beta, ws, wsBytes, choice);
    }

    /** A launch of {@code src} (a tuning variant, say) with {@code args} bound to the session's buffers. */
    Runnable bindLaunch(CudaKernelSource src, List<Step.Arg> args) {
        return bindLaunch(new Step.Launch(-1, null, src, args), src, args);
    }

    private Runnable bindLaunch(Step.Launch step, CudaKernelSource src, List<Step.Arg> args) {
        CudaModule.CudaKernel k = program.kernel(src);
        Object[] a = new Object[args.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = switch (args.get(i)) {
                case Step.Ptr p -> bound(step, LaunchContract.operand(step, i), p.buf(), p.offset(), p.extent(),
                        src.requiresAligned16() ? 16 : 1);
                case Step.I64 v -> v.v();
                case Step.I32 v -> v.v();
                case Step.F32 v -> v.v();
            };
        }
        Object[] all = TensorMaps.append(src, a, device.driver());
        LaunchConfig c = src.launch();
        int[] grid = {Math.toIntExact(c.gridX()), c.gridY(), c.gridZ()};
        int[] block = {c.blockX(), c.blockY(), c.blockZ()};
        int shared = c.dynamicSharedBytes();
        return () -> k.launch(stream, grid, block, shared, all);
    }

    /** {@code b}'s address, after checking that its memory holds {@code extent} bytes with {@code alignment}. */
    private long bound(Step step, String operand, Buf b, long extent, long alignment) {
        return bound(step, operand, b, 0, extent, alignment);
    }

    /** As above, {@code offset} bytes into {@code b}. */
    private long bound(Step step, String operand, Buf b, long offset, long extent, long alignment) {
        long address = buffers.address(b) + offset;
        contract(step, operand, address, buffers.room(b, address), extent, alignment);
        return address;
    }

    private void contract(Step step, String operand, long address, long room, long extent, long alignment) {
        if ((address == 0 && extent > 0) || extent > room || (alignment > 1 && address % alignment != 0)) {
            List<Step> steps = program.steps();
            int index = -1;
            for (int i = 0; i < steps.size(); i++) {
                if (steps.get(i) == step) {
                    index = i;
                }
            }
            LaunchContract.checkBound(program.model(), index, step, operand, address, room, extent, alignment);
        }
    }
}
