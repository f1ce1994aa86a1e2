package dev.lantern.cuda.ffi;

import java.util.Map;
import java.util.Set;

/**
 * CUresult codes to their names, generated from CUDA 13.0's {@code cuda.h}. Used when the
 * driver cannot be asked ({@code cuGetErrorName} itself unavailable or failing), so that an
 * error message always names the error rather than printing a bare number.
 */
public final class CuResult {
    public static final int CUDA_SUCCESS = 0;
    public static final int CUDA_ERROR_OUT_OF_MEMORY = 2;
    public static final int CUDA_ERROR_NOT_INITIALIZED = 3;
    public static final int CUDA_ERROR_NO_DEVICE = 100;
    public static final int CUDA_ERROR_NOT_READY = 600;
    public static final int CUDA_ERROR_ILLEGAL_ADDRESS = 700;
    public static final int CUDA_ERROR_LAUNCH_FAILED = 719;

    /**
     * Codes after which the context is unusable: the driver answers every later call on it with
     * the same error until it is destroyed (cuda.h: "This leaves the process in an inconsistent
     * state and any further CUDA work will return the same error"; ASSERT: "The context cannot be
     * used anymore, and must be destroyed"). Faults of a running kernel (700, 702, 710, 714-719,
     * 721), contained or external-device errors (226, 911), a context that is already destroyed
     * (709), and uncorrectable ECC or NVLink errors (214, 220), after which nothing the context
     * holds can be trusted. Out of memory, bad arguments, capture errors are not among them: the
     * context stays usable after those.
     */
    private static final Set<Integer> CONTEXT_LOST = Set.of(
            214, // CUDA_ERROR_ECC_UNCORRECTABLE
            220, // CUDA_ERROR_NVLINK_UNCORRECTABLE
            226, // CUDA_ERROR_CONTAINED
            700, // CUDA_ERROR_ILLEGAL_ADDRESS
            702, // CUDA_ERROR_LAUNCH_TIMEOUT
            709, // CUDA_ERROR_CONTEXT_IS_DESTROYED
            710, // CUDA_ERROR_ASSERT
            714, // CUDA_ERROR_HARDWARE_STACK_ERROR
            715, // CUDA_ERROR_ILLEGAL_INSTRUCTION
            716, // CUDA_ERROR_MISALIGNED_ADDRESS
            717, // CUDA_ERROR_INVALID_ADDRESS_SPACE
            718, // CUDA_ERROR_INVALID_PC
            719, // CUDA_ERROR_LAUNCH_FAILED
            721, // CUDA_ERROR_TENSOR_MEMORY_LEAK
            911  // CUDA_ERROR_EXTERNAL_DEVICE
    );

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1, "CUDA_ERROR_INVALID_VALUE"),
            Map.entry(2, "CUDA_ERROR_OUT_OF_MEMORY"),
            Map.entry(3, "CUDA_ERROR_NOT_INITIALIZED"),
            Map.entry(4, "CUDA_ERROR_DEINITIALIZED"),
            Map.entry(5, "CUDA_ERROR_PROFILER_DISABLED"),
            Map.entry(6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED"),
            Map.entry(7, "CUDA_ERROR_PROFILER_ALREADY_STARTED"),
            Map.entry(8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED"),
            Map.entry(34, "CUDA_ERROR_STUB_LIBRARY"),
            Map.entry(36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"),
            Map.entry(46, "CUDA_ERROR_DEVICE_UNAVAILABLE"),
            Map.entry(100, "CUDA_ERROR_NO_DEVICE"),
            Map.entry(101, "CUDA_ERROR_INVALID_DEVICE"),
            Map.entry(102, "CUDA_ERROR_DEVICE_NOT_LICENSED"),
            Map.entry(200, "CUDA_ERROR_INVALID_IMAGE"),
            Map.entry(201, "CUDA_ERROR_INVALID_CONTEXT"),
            Map.entry(202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"),
            Map.entry(205, "CUDA_ERROR_MAP_FAILED"),
            Map.entry(206, "CUDA_ERROR_UNMAP_FAILED"),
            Map.entry(207, "CUDA_ERROR_ARRAY_IS_MAPPED"),
            Map.entry(208, "CUDA_ERROR_ALREADY_MAPPED"),
            Map.entry(209, "CUDA_ERROR_NO_BINARY_FOR_GPU"),
            Map.entry(210, "CUDA_ERROR_ALREADY_ACQUIRED"),
            Map.entry(211, "CUDA_ERROR_NOT_MAPPED"),
            Map.entry(212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY"),
            Map.entry(213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER"),
            Map.entry(214, "CUDA_ERROR_ECC_UNCORRECTABLE"),
            Map.entry(215, "CUDA_ERROR_UNSUPPORTED_LIMIT"),
            Map.entry(216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"),
            Map.entry(217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"),
            Map.entry(218, "CUDA_ERROR_INVALID_PTX"),
            Map.entry(219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"),
            Map.entry(220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"),
            Map.entry(221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"),
            Map.entry(222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
            Map.entry(223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"),
            Map.entry(224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"),
            Map.entry(225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC"),
            Map.entry(226, "CUDA_ERROR_CONTAINED"),
            Map.entry(300, "CUDA_ERROR_INVALID_SOURCE"),
            Map.entry(301, "CUDA_ERROR_FILE_NOT_FOUND"),
            Map.entry(302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"),
            Map.entry(303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"),
            Map.entry(304, "CUDA_ERROR_OPERATING_SYSTEM"),
            Map.entry(400, "CUDA_ERROR_INVALID_HANDLE"),
            Map.entry(401, "CUDA_ERROR_ILLEGAL_STATE"),
            Map.entry(402, "CUDA_ERROR_LOSSY_QUERY"),
            Map.entry(500, "CUDA_ERROR_NOT_FOUND"),
            Map.entry(600, "CUDA_ERROR_NOT_READY"),
            Map.entry(700, "CUDA_ERROR_ILLEGAL_ADDRESS"),
            Map.entry(701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
            Map.entry(702, "CUDA_ERROR_LAUNCH_TIMEOUT"),
            Map.entry(703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING"),
            Map.entry(704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"),
            Map.entry(705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"),
            Map.entry(708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"),
            Map.entry(709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"),
            Map.entry(710, "CUDA_ERROR_ASSERT"),
            Map.entry(711, "CUDA_ERROR_TOO_MANY_PEERS"),
            Map.entry(712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"),
            Map.entry(713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"),
            Map.entry(714, "CUDA_ERROR_HARDWARE_STACK_ERROR"),
            Map.entry(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"),
            Map.entry(716, "CUDA_ERROR_MISALIGNED_ADDRESS"),
            Map.entry(717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"),
            Map.entry(718, "CUDA_ERROR_INVALID_PC"),
            Map.entry(719, "CUDA_ERROR_LAUNCH_FAILED"),
            Map.entry(720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
            Map.entry(721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"),
            Map.entry(800, "CUDA_ERROR_NOT_PERMITTED"),
            Map.entry(801, "CUDA_ERROR_NOT_SUPPORTED"),
            Map.entry(802, "CUDA_ERROR_SYSTEM_NOT_READY"),
            Map.entry(803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
            Map.entry(804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"),
            Map.entry(805, "CUDA_ERROR_MPS_CONNECTION_FAILED"),
            Map.entry(806, "CUDA_ERROR_MPS_RPC_FAILURE"),
            Map.entry(807, "CUDA_ERROR_MPS_SERVER_NOT_READY"),
            Map.entry(808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED"),
            Map.entry(809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED"),
            Map.entry(810, "CUDA_ERROR_MPS_CLIENT_TERMINATED"),
            Map.entry(811, "CUDA_ERROR_CDP_NOT_SUPPORTED"),
            Map.entry(812, "CUDA_ERROR_CDP_VERSION_MISMATCH"),
            Map.entry(900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"),
            Map.entry(901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"),
            Map.entry(902, "CUDA_ERROR_STREAM_CAPTURE_MERGE"),
            Map.entry(903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"),
            Map.entry(904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"),
            Map.entry(905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"),
            Map.entry(906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"),
            Map.entry(907, "CUDA_ERROR_CAPTURED_EVENT"),
            Map.entry(908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"),
            Map.entry(909, "CUDA_ERROR_TIMEOUT"),
            Map.entry(910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"),
            Map.entry(911, "CUDA_ERROR_EXTERNAL_DEVICE"),
            Map.entry(912, "CUDA_ERROR_INVALID_CLUSTER_SIZE"),
            Map.entry(913, "CUDA_ERROR_FUNCTION_NOT_LOADED"),
            Map.entry(914, "CUDA_ERROR_INVALID_RESOURCE_TYPE"),
            Map.entry(915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION"),
            Map.entry(916, "CUDA_ERROR_KEY_ROTATION"),
            Map.entry(999, "CUDA_ERROR_UNKNOWN")
    );

    private CuResult() {}

    /** True for the "sticky" codes that leave the context unusable until it is reset. */
    public static boolean isContextLost(int code) {
        return CONTEXT_LOST.contains(code);
    }

    /** The symbolic name, e.g. "CUDA_ERROR_OUT_OF_MEMORY", or "CUresult(n)" for an unknown code. */
    public static String name(int code) {
        if (code == CUDA_SUCCESS) {
            return "CUDA_SUCCESS";
        }
        String name = NAMES.get(code);
        return name != null ? name : "CUresult(" + code + ")";
    }
}
