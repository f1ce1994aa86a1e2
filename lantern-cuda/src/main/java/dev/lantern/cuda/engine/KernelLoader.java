package dev.lantern.cuda.engine;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Generated kernels compiled (NVRTC, through the on-disk {@link ModuleCache}) and loaded on one
 * device, once per entry name: the entry is derived from the source's text, so one entry is one
 * kernel. Owns the modules it loaded.
 */
final class KernelLoader implements AutoCloseable {
    private final CudaDevice device;
    private final ModuleCache modules;
    private final Map<String, CudaModule.CudaKernel> kernels = new HashMap<>();
    private final List<CudaModule> loaded = new ArrayList<>();

    KernelLoader(CudaDevice device) {
        this.device = device;
        this.modules = ModuleCache.forDevice(device);
    }

    /** {@code src}'s kernel, compiled or taken from the cache and loaded on first use; shared memory opted in. */
    CudaModule.CudaKernel load(CudaKernelSource src) {
        CudaModule.CudaKernel k = kernels.get(src.entry());
        if (k == null) {
            CudaModule m = modules.load(device, new KernelSource(src.entry(), src.source(), List.of(), src.variant(), src.archSpecific()));
            loaded.add(m);
            k = m.kernel(src.entry());
            LaunchConfig c = src.launch();
            if (c.needsSharedOptIn()) {
                k.setMaxDynamicSharedBytes(c.dynamicSharedBytes());
            }
            kernels.put(src.entry(), k);
        }
        return k;
    }

    @Override
    public void close() {
        loaded.forEach(CudaModule::close);
        loaded.clear();
        kernels.clear();
    }
}
