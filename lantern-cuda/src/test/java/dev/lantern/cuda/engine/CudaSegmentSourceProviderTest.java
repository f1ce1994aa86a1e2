package dev.lantern.cuda.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.ffi.CudaUnavailableException;
import dev.lantern.runtime.alloc.SegmentSourceProvider;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

class CudaSegmentSourceProviderTest {
    @Test
    void serviceLoaderFindsTheCudaProvider() {
        SegmentSourceProvider found = null;
        for (SegmentSourceProvider p : ServiceLoader.load(SegmentSourceProvider.class)) {
            if (p.device().equals("cuda")) {
                found = p;
            }
        }
        assertNotNull(found, "META-INF/services lists CudaSegmentSourceProvider");
        assertEquals(CudaSegmentSourceProvider.class, found.getClass());
    }

    @Test
    void withoutAGpuOpenFailsWithOneClearLine() {
        assumeTrue(CudaDevice.count() == 0, "a GPU is present");
        CudaUnavailableException e = assertThrows(CudaUnavailableException.class,
                () -> new CudaSegmentSourceProvider().open());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().startsWith("no CUDA GPU: "), e.getMessage());
    }

    private static void assertTrue(boolean b, String msg) {
        org.junit.jupiter.api.Assertions.assertTrue(b, msg);
    }
}
