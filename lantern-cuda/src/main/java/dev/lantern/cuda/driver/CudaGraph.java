package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CudaGraphApi;
import dev.lantern.runtime.ExecutableGraph;
import dev.lantern.runtime.Stream;

/**
 * A captured CUgraph and its instantiation (CUgraphExec). Replaying it launches every
 * captured node with one call, which is what makes many small kernels cheap.
 */
public final class CudaGraph implements ExecutableGraph {
    private final CudaDevice device;
    private final CudaDriver driver;
    private final ContextHealth generation;
    private long graph;
    private final long exec;
    private int kernelCount;
    private final ReleaseOnce release;

    private CudaGraph(CudaDevice device, ContextHealth generation, long graph, long exec) {
        this.device = device;
        this.driver = device.driver();
        this.generation = generation;
        this.graph = graph;
        this.exec = exec;
        this.kernelCount = countKernels(driver, graph);
        this.release = new ReleaseOnce(device, generation, () -> {
            driver.graphs().graphExecDestroy(exec);
            driver.graphs().graphDestroy(this.graph);
        });
    }

    /** Instantiates a captured graph; takes ownership of {@code graph} (destroyed with this). */
    static CudaGraph instantiate(CudaDevice device, long graph) {
        ContextHealth gen = device.generation();
        device.makeCurrent(gen);
        long exec;
        try {
            exec = device.driver().graphs().graphInstantiate(graph, 0);
        } catch (RuntimeException e) {
            device.release(gen, () -> device.driver().graphs().graphDestroy(graph));
            throw e;
        }
        return new CudaGraph(device, gen, graph, exec);
    }

    private static int countKernels(CudaDriver driver, long graph) {
        int n = 0;
        for (long node : driver.graphs().graphGetNodes(graph)) {
            if (driver.graphs().graphNodeGetType(node) == CudaGraphApi.CU_GRAPH_NODE_TYPE_KERNEL) {
                n++;
            }
        }
        return n;
    }

    @Override
    public void launch(Stream stream) {
        device.makeCurrent(generation);
        driver.graphs().graphLaunch(exec, CudaDevice.cuda(stream).handle());
    }

    @Override
    public int kernelCount() {
        return kernelCount;
    }

    /**
     * Updates the instantiated graph from a new capture of the same topology (new pointers or
     * scalars) without re-instantiating. Returns false, leaving this graph unchanged, when
     * CUDA refuses the update; takes ownership of {@code newGraph} either way.
     */
    public boolean update(long newGraph) {
        device.makeCurrent(generation);
        int result = driver.graphs().graphExecUpdate(exec, newGraph);
        if (result != 0) {
            driver.graphs().graphDestroy(newGraph);
            return false;
        }
        driver.graphs().graphDestroy(graph);
        graph = newGraph;
        kernelCount = countKernels(driver, graph);
        return true;
    }

    /** The label a context-loss report gives a replay of this graph. */
    @Override
    public String toString() {
        return "CUDA graph replay (" + kernelCount + " kernels)";
    }

    @Override
    public void close() {
        release.run();
    }
}
