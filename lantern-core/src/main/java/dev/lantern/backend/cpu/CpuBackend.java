package dev.lantern.backend.cpu;

import dev.lantern.Backend;
import dev.lantern.Device;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;

/** The CPU backend: the Vector API kernels of lantern-core, multi-threaded. Always present. */
public final class CpuBackend implements Backend {
    @Override
    public String kind() {
        return "cpu";
    }

    @Override
    public int deviceCount() {
        return 1;
    }

    @Override
    public String unavailableReason() {
        return null;
    }

    @Override
    public Session open(Program program, Device device, Weights weights, RunMode mode) {
        return new CpuSession(program, device, weights, mode);
    }
}
