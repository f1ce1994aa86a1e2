package dev.lantern.cuda.ffi;

import static dev.lantern.cuda.ffi.CudaDriver.I_L;
import static dev.lantern.cuda.ffi.CudaDriver.I_LI;
import static dev.lantern.cuda.ffi.CudaDriver.I_LL;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * Stream capture and graphs in the driver API: begin and end a capture, ask a stream's capture
 * status, instantiate, launch, update in place and destroy graphs, and list their nodes. Part
 * of {@link CudaDriver} ({@code driver.graphs()}).
 */
public final class CudaGraphApi {
    public static final int CU_STREAM_CAPTURE_MODE_GLOBAL = 0;
    public static final int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
    public static final int CU_STREAM_CAPTURE_STATUS_NONE = 0;
    public static final int CU_GRAPH_NODE_TYPE_KERNEL = 0;

    private final CudaDriver driver;
    private final Fn cuStreamBeginCapture;
    private final Fn cuStreamEndCapture;
    private final Fn cuStreamIsCapturing;
    private final Fn cuGraphInstantiate;
    private final Fn cuGraphLaunch;
    private final Fn cuGraphExecUpdate;
    private final Fn cuGraphDestroy;
    private final Fn cuGraphExecDestroy;
    private final Fn cuGraphGetNodes;
    private final Fn cuGraphNodeGetType;

    CudaGraphApi(NativeLibrary lib, CudaDriver driver) {
        this.driver = driver;
        cuStreamBeginCapture = lib.fn(I_LI, "cuStreamBeginCapture_v2");
        cuStreamEndCapture = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "cuStreamEndCapture");
        cuStreamIsCapturing = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "cuStreamIsCapturing");
        cuGraphInstantiate = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG),
                "cuGraphInstantiateWithFlags");
        cuGraphLaunch = lib.fn(I_LL, "cuGraphLaunch");
        cuGraphExecUpdate = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS),
                "cuGraphExecUpdate_v2");
        cuGraphDestroy = lib.fn(I_L, "cuGraphDestroy");
        cuGraphExecDestroy = lib.fn(I_L, "cuGraphExecDestroy");
        cuGraphGetNodes = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS), "cuGraphGetNodes");
        cuGraphNodeGetType = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "cuGraphNodeGetType");
    }

    public void streamBeginCapture(long stream, int mode) {
        try {
            driver.check(cuStreamBeginCapture, (int) cuStreamBeginCapture.handle().invokeExact(stream, mode));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /**
     * Ends capture. Returns {rc, graph}: the caller decides what an invalidated capture means
     * (the graph is 0 then), because ending a failed capture is part of normal recovery.
     */
    public long[] streamEndCapture(long stream) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            int rc = (int) cuStreamEndCapture.handle().invokeExact(stream, out);
            return new long[] {rc, out.get(JAVA_LONG, 0)};
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public String endCaptureName() {
        return cuStreamEndCapture.name();
    }

    /** CUstreamCaptureStatus: 0 none, 1 active, 2 invalidated. */
    public int streamIsCapturing(long stream) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            driver.check(cuStreamIsCapturing, (int) cuStreamIsCapturing.handle().invokeExact(stream, out));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public long graphInstantiate(long graph, long flags) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            driver.check(cuGraphInstantiate, (int) cuGraphInstantiate.handle().invokeExact(out, graph, flags));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void graphLaunch(long exec, long stream) {
        try {
            driver.check(cuGraphLaunch, (int) cuGraphLaunch.handle().invokeExact(exec, stream));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** CUgraphExecUpdateResultInfo: {int result; CUgraphNode errorNode; CUgraphNode errorFromNode}. */
    private static final MemoryLayout UPDATE_INFO = MemoryLayout.structLayout(
            JAVA_INT.withName("result"), MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("errorNode"), JAVA_LONG.withName("errorFromNode"));

    /**
     * Updates an instantiated graph in place from a new capture of the same topology.
     * Returns 0 (CU_GRAPH_EXEC_UPDATE_SUCCESS) or the CUgraphExecUpdateResult explaining why
     * not, in which case the caller re-instantiates; other failures throw.
     */
    public int graphExecUpdate(long exec, long graph) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment info = a.allocate(UPDATE_INFO);
            int rc = (int) cuGraphExecUpdate.handle().invokeExact(exec, graph, info);
            int result = info.get(JAVA_INT, 0);
            if (rc == 0) {
                return 0;
            }
            if (result != 0) {
                return result; // CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE with a reason
            }
            driver.check(cuGraphExecUpdate, rc);
            return 0;
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void graphDestroy(long graph) {
        driver.callL(cuGraphDestroy, graph);
    }

    public void graphExecDestroy(long exec) {
        driver.callL(cuGraphExecDestroy, exec);
    }

    public long[] graphGetNodes(long graph) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment count = a.allocate(JAVA_LONG);
            driver.check(cuGraphGetNodes, (int) cuGraphGetNodes.handle().invokeExact(graph, MemorySegment.NULL, count));
            long n = count.get(JAVA_LONG, 0);
            if (n == 0) {
                return new long[0];
            }
            MemorySegment nodes = a.allocate(JAVA_LONG, n);
            driver.check(cuGraphGetNodes, (int) cuGraphGetNodes.handle().invokeExact(graph, nodes, count));
            return nodes.asSlice(0, count.get(JAVA_LONG, 0) * 8).toArray(JAVA_LONG);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public int graphNodeGetType(long node) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            driver.check(cuGraphNodeGetType, (int) cuGraphNodeGetType.handle().invokeExact(node, out));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }
}
