package dev.lantern.cuda.ffi;

import static dev.lantern.cuda.ffi.CudaDriver.I_AI;
import static dev.lantern.cuda.ffi.CudaDriver.I_L;
import static dev.lantern.cuda.ffi.CudaDriver.I_LL;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;

/**
 * Streams and events in the driver API: create a stream at a priority, synchronize, make it
 * wait for an event; create, record, query, synchronize, time and destroy events. Part of
 * {@link CudaDriver} ({@code driver.streams()}); stream capture is in {@link CudaGraphApi}.
 */
public final class CudaStreamApi {
    public static final int CU_STREAM_NON_BLOCKING = 0x1;
    public static final int CU_EVENT_DEFAULT = 0x0;
    public static final int CU_EVENT_DISABLE_TIMING = 0x2;

    private final CudaDriver driver;
    private final Fn cuStreamCreateWithPriority;
    private final Fn cuStreamDestroy;
    private final Fn cuStreamSynchronize;
    private final Fn cuStreamWaitEvent;
    private final Fn cuEventCreate;
    private final Fn cuEventRecord;
    private final Fn cuEventQuery;
    private final Fn cuEventSynchronize;
    private final Fn cuEventElapsedTime;
    private final Fn cuEventDestroy;

    CudaStreamApi(NativeLibrary lib, CudaDriver driver) {
        this.driver = driver;
        cuStreamCreateWithPriority = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                "cuStreamCreateWithPriority");
        cuStreamDestroy = lib.fn(I_L, "cuStreamDestroy_v2");
        cuStreamSynchronize = lib.fn(I_L, "cuStreamSynchronize");
        cuStreamWaitEvent = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT),
                "cuStreamWaitEvent");
        cuEventCreate = lib.fn(I_AI, "cuEventCreate");
        cuEventRecord = lib.fn(I_LL, "cuEventRecord");
        cuEventQuery = lib.fn(I_L, "cuEventQuery");
        cuEventSynchronize = lib.fn(I_L, "cuEventSynchronize");
        cuEventElapsedTime = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG),
                "cuEventElapsedTime_v2", "cuEventElapsedTime");
        cuEventDestroy = lib.fn(I_L, "cuEventDestroy_v2");
    }

    public long streamCreateWithPriority(int flags, int priority) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            driver.check(cuStreamCreateWithPriority,
                    (int) cuStreamCreateWithPriority.handle().invokeExact(out, flags, priority));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void streamDestroy(long stream) {
        driver.callL(cuStreamDestroy, stream);
    }

    public void streamSynchronize(long stream) {
        driver.callL(cuStreamSynchronize, stream);
    }

    public void streamWaitEvent(long stream, long event) {
        try {
            driver.check(cuStreamWaitEvent, (int) cuStreamWaitEvent.handle().invokeExact(stream, event, 0));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public long eventCreate(int flags) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            driver.check(cuEventCreate, (int) cuEventCreate.handle().invokeExact(out, flags));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void eventRecord(long event, long stream) {
        try {
            driver.check(cuEventRecord, (int) cuEventRecord.handle().invokeExact(event, stream));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** True when complete; CUDA_ERROR_NOT_READY is the "not yet" answer, not an error. */
    public boolean eventQuery(long event) {
        int rc;
        try {
            rc = (int) cuEventQuery.handle().invokeExact(event);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
        if (rc == CuResult.CUDA_ERROR_NOT_READY) {
            return false;
        }
        driver.check(cuEventQuery, rc);
        return true;
    }

    public void eventSynchronize(long event) {
        driver.callL(cuEventSynchronize, event);
    }

    public float eventElapsedTime(long start, long end) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_FLOAT);
            driver.check(cuEventElapsedTime, (int) cuEventElapsedTime.handle().invokeExact(out, start, end));
            return out.get(JAVA_FLOAT, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void eventDestroy(long event) {
        driver.callL(cuEventDestroy, event);
    }
}
